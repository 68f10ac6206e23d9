// Beyond the original: turning sweep reports into a choice. The
// recommendation is the shortest VALID measurement duration and the
// shortest VALID cool-down, with what using them costs in wall time.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "zeus/profile/profile.hpp"

namespace zeus::profile {

struct Recommendation {
    double measurement_duration = 0.0;  // s
    double cooldown_duration = 0.0;     // s
    // Wall time of one measurement with these durations: the cool-down, the
    // warm-up iterations and the measured window, from the trials of the
    // chosen entry (their average window length and time per iteration).
    double wall_time_per_measurement = 0.0;  // s
    double window_time = 0.0;                // s, the measured part of it
    double warmup_time = 0.0;                // s, the warm-up iterations

    // "Recommended: measurement_duration=3.0 s, cooldown_duration=5.0 s; one
    //  measurement takes 8.4 s of wall time (5.0 s cool-down + 0.4 s warm-up +
    //  3.0 s window, 36% of it measured)"
    [[nodiscard]] std::string to_string() const;
};

// From the two reports of profile_parameters: the shortest valid measurement
// duration of `measurement` and the shortest valid cool-down of `cooldown`.
// Each was validated with the other parameter at the maximum of its range,
// so the pair is a recommendation, not a guarantee (see docs/profiling.md).
// nullopt when either report has no valid entry.
[[nodiscard]] std::optional<Recommendation> recommend(const SweepReport& measurement, const SweepReport& cooldown,
                                                      std::size_t num_warmup_iterations);
// From one report: its shortest valid swept value, with the fixed value for
// the other parameter.
[[nodiscard]] std::optional<Recommendation> recommend(const SweepReport& report, std::size_t num_warmup_iterations);

}  // namespace zeus::profile
