// What an energy window measured, and how much each number can be trusted.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/units.hpp"

namespace zeus {

// How an energy value was obtained, from most to least direct.
enum class EnergySource {
    HardwareCounter,            // difference of a cumulative hardware energy counter
    IntegratedPower,            // power samples integrated over the window (no counter)
    InstantPowerApproximation,  // one instant power reading × window length
    WindowLog,                  // read back from a window log (ReplayMonitor)
};
[[nodiscard]] std::string_view to_string(EnergySource source);

struct EnergyValue {
    Joules energy{0.0};
    EnergySource source = EnergySource::HardwareCounter;
    std::vector<std::string> warnings;  // e.g. the window is shorter than the counter's update period
    // The device stopped answering before the window ended (a lost GPU):
    // its energy is unknown, `energy` is 0 and left out of totals, and a
    // warning says why.
    bool lost = false;
    // A hardware-counter value whose edges were estimated past the counter's
    // last refresh (without EnergyMonitorOptions::wait_for_counter_refresh):
    // the most the value can be off by that estimate. Each edge adds
    // power × the time since the refresh with one power reading; the power
    // in that time may have been anything from 0 W to the GPU's highest
    // power limit, so the bound is, summed over both edges, that time × the
    // larger distance from the reading to 0 W or to the limit. nullopt when
    // the edges were read at a refresh or settled on the next refreshes.
    std::optional<Joules> edge_error_bound = std::nullopt;
};

struct Measurement {
    std::chrono::system_clock::time_point start_time;  // wall clock, for logs
    Seconds time{0.0};                                  // elapsed, monotonic clock
    std::map<unsigned, EnergyValue> gpu_energy;         // by GPU index
    std::map<unsigned, EnergyValue> cpu_energy;         // CPU package, by CPU index
    std::map<unsigned, EnergyValue> dram_energy;        // DRAM of that package, when it has one
    std::map<std::string, EnergyValue> soc_energy;      // SoC metric ("cpu", "gpu", "total")
    std::vector<std::string> warnings;                  // about the window as a whole

    // GPU energy summed, as the original's total_energy.
    [[nodiscard]] Joules total_gpu_energy() const;
    // Every GPU, CPU package and DRAM value summed (SoC metrics overlap and are left out).
    [[nodiscard]] Joules total_energy() const;
    // True when no value carries a warning.
    [[nodiscard]] bool trustworthy() const;
};

}  // namespace zeus
