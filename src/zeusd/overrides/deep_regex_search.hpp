// std::regex_search on a thread of its own with a large stack. libstdc++'s
// regex engine recurses once per character a quantifier consumes: a pattern
// such as "failed.*" against a few tens of KiB of output overflows an 8 MiB
// stack and would crash the daemon. Only address space is reserved; the pages
// are touched only as deep as the search goes.
#pragma once

#include <optional>
#include <regex>
#include <string>

namespace zeus::zeusd {

// Whether `pattern` matches anywhere in `text`; nullopt when the search could
// not be run (no thread could be started, or the engine threw).
[[nodiscard]] std::optional<bool> deep_regex_search(const std::regex& pattern, const std::string& text);

}  // namespace zeus::zeusd
