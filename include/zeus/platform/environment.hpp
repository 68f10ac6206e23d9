// Reading environment variables users set, with typed parsing and errors
// that name the variable, the bad value and what would be accepted.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus {

// The variable's value, or nullopt when unset (an empty value is a value).
[[nodiscard]] std::optional<std::string> get_env(const char* name);

// 1/true/yes/on and 0/false/no/off (any case); unset -> `fallback`.
[[nodiscard]] Result<bool> get_env_bool(const char* name, bool fallback);

}  // namespace zeus
