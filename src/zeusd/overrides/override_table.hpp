// One validated table of the override file. Internal to the overrides.
#pragma once

// GCC 12 with sanitizers warns falsely about maybe-uninitialized std::function
// members inside libstdc++'s regex compiler (GCC bug 105562); the warning
// is located in the library's code, so it is silenced where <regex> comes in.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "zeus/platform/error.hpp"
#include "zeusd/overrides/gpu_command.hpp"


namespace zeus::zeusd {

inline constexpr std::chrono::seconds kDefaultOverrideTimeout{60};

struct OverrideTable {
    GpuCommand command = GpuCommand::SetPowerLimit;
    // Each command already split into words, placeholders still in them.
    std::vector<std::vector<std::string>> commands;
    std::optional<std::regex> error_pattern;
    std::string error_pattern_text;  // as written, for messages
    std::chrono::seconds timeout = kDefaultOverrideTimeout;
};

// Validates the table for `command`. `source_name` (the file) prefixes every
// error message.
[[nodiscard]] Result<OverrideTable> parse_override_table(GpuCommand command, const toml::table& table,
                                                         std::string_view source_name);

}  // namespace zeus::zeusd
