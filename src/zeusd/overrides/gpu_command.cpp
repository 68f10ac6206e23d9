#include "zeusd/overrides/gpu_command.hpp"

#include <string>

namespace zeus::zeusd {
namespace {

constexpr std::array<std::string_view, 2> kPersistence = {"gpu_id", "enabled"};
constexpr std::array<std::string_view, 3> kPowerLimit = {"gpu_id", "power_limit_mw", "power_limit_w"};
constexpr std::array<std::string_view, 3> kClocks = {"gpu_id", "min_clock_mhz", "max_clock_mhz"};
constexpr std::array<std::string_view, 1> kGpuOnly = {"gpu_id"};

}  // namespace

std::string_view to_string(GpuCommand command) {
    switch (command) {
        case GpuCommand::SetPersistenceMode: return "set_persistence_mode";
        case GpuCommand::SetPowerLimit: return "set_power_limit";
        case GpuCommand::SetGpuLockedClocks: return "set_gpu_locked_clocks";
        case GpuCommand::ResetGpuLockedClocks: return "reset_gpu_locked_clocks";
        case GpuCommand::SetMemLockedClocks: return "set_mem_locked_clocks";
        case GpuCommand::ResetMemLockedClocks: return "reset_mem_locked_clocks";
        case GpuCommand::ResetLockedClocks: return "reset_locked_clocks";
    }
    return "unknown";
}

std::optional<GpuCommand> parse_gpu_command(std::string_view table_name) {
    for (const auto command : kAllGpuCommands) {
        if (to_string(command) == table_name) return command;
    }
    return std::nullopt;
}

std::span<const std::string_view> allowed_placeholders(GpuCommand command) {
    switch (command) {
        case GpuCommand::SetPersistenceMode: return kPersistence;
        case GpuCommand::SetPowerLimit: return kPowerLimit;
        case GpuCommand::SetGpuLockedClocks:
        case GpuCommand::SetMemLockedClocks: return kClocks;
        case GpuCommand::ResetGpuLockedClocks:
        case GpuCommand::ResetMemLockedClocks:
        case GpuCommand::ResetLockedClocks: return kGpuOnly;
    }
    return kGpuOnly;
}

std::optional<std::string> placeholder_value(std::string_view name, const CommandArguments& arguments) {
    const auto number = [](std::optional<unsigned> value) -> std::optional<std::string> {
        if (!value) return std::nullopt;
        return std::to_string(*value);
    };
    if (name == "gpu_id") return std::to_string(arguments.gpu_id);
    if (name == "power_limit_mw") return number(arguments.power_limit_mw);
    if (name == "power_limit_w") {
        // Integer division, as the original: 253999 mW is 253 W.
        if (!arguments.power_limit_mw) return std::nullopt;
        return std::to_string(*arguments.power_limit_mw / 1000);
    }
    if (name == "min_clock_mhz") return number(arguments.min_clock_mhz);
    if (name == "max_clock_mhz") return number(arguments.max_clock_mhz);
    if (name == "enabled") {
        if (!arguments.enabled) return std::nullopt;
        return std::string(*arguments.enabled ? "1" : "0");
    }
    return std::nullopt;
}

}  // namespace zeus::zeusd
