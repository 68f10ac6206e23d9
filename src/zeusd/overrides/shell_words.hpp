// POSIX-shell word splitting, compatible with the Rust `shell_words` crate the
// original daemon uses: the same command line gives the same argv here.
// There is no expansion of any kind ($VAR, globs, ~): only quoting.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::zeusd {

// Splits `line` into words. Rules: blanks (space, tab, newline) separate
// words; 'single quotes' keep everything literally; "double quotes" keep
// everything except that a backslash escapes $ ` " \ and joins lines; outside
// quotes a backslash keeps the next character literally (a backslash-newline
// vanishes); a # at the start of a word begins a comment to the end of the
// line. nullopt when a quote is left open.
[[nodiscard]] std::optional<std::vector<std::string>> split_shell_words(std::string_view line);

// One word quoted so that split_shell_words() gives it back unchanged; words
// made only of safe characters are left bare. For messages and logs.
[[nodiscard]] std::string quote_shell_word(std::string_view word);
// The words quoted and joined by spaces.
[[nodiscard]] std::string join_shell_words(std::span<const std::string> words);

}  // namespace zeus::zeusd
