// One GPU control request, as the seven control routes express it
// (GpuCommand names them as the routes and the override tables do).
#pragma once

#include <cstdint>
#include <string_view>

#include "zeusd/overrides/gpu_command.hpp"

namespace zeus::zeusd {

struct ControlCommand {
    GpuCommand kind = GpuCommand::SetPowerLimit;
    unsigned gpu = 0;
    std::uint32_t power_limit_mw = 0;
    bool enabled = false;
    std::uint32_t min_clock_mhz = 0;
    std::uint32_t max_clock_mhz = 0;
};

}  // namespace zeus::zeusd
