// std::regex_search on a thread of its own with a large stack. libstdc++'s
// regex engine recurses once per character a quantifier consumes: a pattern
// such as "failed.*" against a few tens of KiB of output overflows an 8 MiB
// stack and would crash the daemon. Only address space is reserved; the pages
// are touched only as deep as the search goes.
#pragma once

// GCC 12 with sanitizers warns falsely about maybe-uninitialized std::function
// members inside libstdc++'s regex compiler (GCC bug 105562); the warning
// is located in the library's code, so it is silenced where <regex> comes in.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

#include <optional>
#include <string>

namespace zeus::zeusd {

// Whether `pattern` matches anywhere in `text`; nullopt when the search could
// not be run (no thread could be started, or the engine threw).
[[nodiscard]] std::optional<bool> deep_regex_search(const std::regex& pattern, const std::string& text);

}  // namespace zeus::zeusd
