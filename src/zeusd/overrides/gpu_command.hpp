// The GPU control commands an operator may replace with external commands,
// the arguments each one carries, and the placeholders each one may use.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zeus::zeusd {

// Declared in the order the original's override file lists its tables.
enum class GpuCommand {
    SetPersistenceMode,
    SetPowerLimit,
    SetGpuLockedClocks,
    ResetGpuLockedClocks,
    SetMemLockedClocks,
    ResetMemLockedClocks,
    ResetLockedClocks,
};

inline constexpr std::array kAllGpuCommands = {
    GpuCommand::SetPersistenceMode,   GpuCommand::SetPowerLimit,
    GpuCommand::SetGpuLockedClocks,   GpuCommand::ResetGpuLockedClocks,
    GpuCommand::SetMemLockedClocks,   GpuCommand::ResetMemLockedClocks,
    GpuCommand::ResetLockedClocks,
};

// The values a command is run with. Only those the command takes need be set:
// a placeholder whose value is missing makes run() fail before anything runs.
struct CommandArguments {
    unsigned gpu_id = 0;
    std::optional<unsigned> power_limit_mw;
    std::optional<unsigned> min_clock_mhz;
    std::optional<unsigned> max_clock_mhz;
    std::optional<bool> enabled;
};

// The TOML table name, e.g. "set_power_limit".
[[nodiscard]] std::string_view to_string(GpuCommand command);
[[nodiscard]] std::optional<GpuCommand> parse_gpu_command(std::string_view table_name);

// Placeholder names (without braces) a command's override may use.
[[nodiscard]] std::span<const std::string_view> allowed_placeholders(GpuCommand command);

// The text a placeholder stands for, or nullopt when `arguments` lacks it.
// Precondition: `name` is one of the names allowed_placeholders() knows.
[[nodiscard]] std::optional<std::string> placeholder_value(std::string_view name,
                                                           const CommandArguments& arguments);

}  // namespace zeus::zeusd
