// Options shared by CarbonEmissionMonitor and EnergyCostMonitor.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "zeus/device/gpus.hpp"

namespace zeus::carbon {

struct HourlyMonitorOptions {
    // The background thread wakes at every UTC hour boundary (to split open
    // windows there) and at least this often (to fetch the current hour's
    // rate while the provider can be reached).
    std::chrono::milliseconds poll_interval{std::chrono::seconds(30)};
    // An hour the provider has no value for takes the nearest hour it has
    // within this many hours (a fallback: flagged, with a warning).
    int max_gap_hours = 2;
    // Used, with a warning, for hours still without a value (provider
    // unreachable, history too short). nullopt: those windows' amounts are
    // unavailable instead.
    std::optional<double> fallback_per_kwh;
    // Now, on the clock the energy monitor times windows by. Empty: the GPU
    // simulator's virtual clock when the GPUs run on it, else the system clock.
    std::function<std::chrono::system_clock::time_point()> clock;
};

// The clock EnergyMonitor times windows by over `gpus`: the GPU simulator's
// virtual clock when they run on it, else the system clock. For monitors
// built over an EnergyMonitor the caller opened.
[[nodiscard]] std::function<std::chrono::system_clock::time_point()> window_clock(const Gpus& gpus);

}  // namespace zeus::carbon
