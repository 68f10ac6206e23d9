// One hour's carbon intensity (gCO2eq/kWh) or electricity price (currency
// per kWh), with where it came from. Carbon and price providers both answer
// in these, and the monitors multiply each UTC hour's energy by them.
#pragma once

#include <chrono>
#include <string>

#include "zeus/platform/wall_clock.hpp"

namespace zeus::carbon {

// A UTC instant to the second; hours are values of it on whole hours.
using UtcTime = std::chrono::sys_seconds;

[[nodiscard]] inline UtcTime hour_floor(std::chrono::system_clock::time_point t) {
    // Floor, not truncation: before 1970 (a negative count) the hour is the one before.
    return std::chrono::floor<std::chrono::hours>(t);
}
[[nodiscard]] inline UtcTime hour_floor(WallTime t) {
    return UtcTime(std::chrono::floor<std::chrono::hours>(t.time_since_epoch()));
}

struct HourlyRate {
    UtcTime hour;         // the UTC hour [hour, hour + 1 h) the value applies to
    double per_kwh = 0;   // gCO2eq/kWh or currency/kWh
    UtcTime data_time;    // the provider's own timestamp of the value
    bool estimated = false;  // the provider said it is an estimate (ElectricityMaps isEstimated)
};

// "2024-11-30T06:00:00Z".
[[nodiscard]] std::string format_utc(UtcTime t);

}  // namespace zeus::carbon
