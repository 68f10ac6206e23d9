#include "zeus/platform/environment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace zeus {

std::optional<std::string> get_env(const char* name) {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
    if (value == nullptr) return std::nullopt;
    return std::string(value);
}

Result<bool> get_env_bool(const char* name, bool fallback) {
    auto value = get_env(name);
    if (!value) return fallback;
    std::string v = *value;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
    if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) return false;
    return Error{ErrorCode::InvalidConfig, fmt::format("{}=\"{}\" is not a boolean", name, *value),
                 fmt::format("set {} to 1 or 0 (true/false, yes/no, on/off), or unset it", name), 0};
}

}  // namespace zeus
