// `zeus profile` options and their validation. Pure (text in, values or an
// Error naming the option, the problem and the fix out), so unit-tested
// without devices.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/profile/profile.hpp"

namespace zeus::cli {

// A day: longer windows or cool-downs are typing mistakes (1e9 s is 31 years).
inline constexpr double kMaxDurationS = 86400.0;
// Trials and iterations: more than a million is a typing mistake too.
inline constexpr long long kMaxCount = 1000000;

enum class ProfileMode { Parameters, Measurement, Cooldown, Measure };
enum class ProfileFormat { Human, Json };

// As typed; every default is the original's.
struct ProfileOptions {
    DeviceFlags device;
    std::string gpus = "all";
    std::string mode = "parameters";
    std::string measurement_range = "1,2,3,4,5,6,7,8,9,10";
    std::string cooldown_range = "1,2,3,4,5,6,7,8,9,10";
    std::optional<double> measurement_duration;  // fixed in a cool-down sweep (10) or measure (required)
    std::optional<double> cooldown_duration;     // fixed in a measurement sweep (10) or measure (required)
    long long trials = 10;
    long long warmup_trials = 2;
    double threshold = 0.01;
    long long warmup_iterations = 10;
    long long calibration_iterations = 100;
    std::optional<double> iteration_duration;  // skip calibration
    std::optional<double> simulated_work;      // seconds of simulated work per iteration, instead of a command
    double simulated_util = 1.0;
    std::string format = "human";
    std::string output;
    std::string plot;
    bool quiet = false;
    std::string window_edges = "sampled";  // or "synchronous" (EnergyMonitorOptions::edges)
    std::vector<std::string> command;
};

// What the command runs with, checked.
struct ProfilePlan {
    ProfileMode mode = ProfileMode::Parameters;
    ProfileFormat format = ProfileFormat::Human;
    std::vector<double> measurement_range;
    std::vector<double> cooldown_range;
    double measurement_duration = 10.0;
    double cooldown_duration = 10.0;
    std::size_t trials = 10;
    std::size_t warmup_trials = 2;
    double threshold = 0.01;
    std::size_t warmup_iterations = 10;
    std::size_t calibration_iterations = 100;
    std::optional<double> iteration_duration;
};

// "1,2.5,10" -> {1, 2.5, 10}. Each value finite and >= `minimum` (> when
// `strict`). The error names `option` and the bad entry.
[[nodiscard]] Result<std::vector<double>> parse_duration_list(std::string_view option, std::string_view text,
                                                              double minimum, bool strict);

// Checks everything that can be checked without devices (the command or
// --simulated-work, counts, durations, format, --plot with a sweep).
[[nodiscard]] Result<ProfilePlan> plan_profile(const ProfileOptions& options);

[[nodiscard]] std::string_view mode_name(ProfileMode mode);

// What a plan will run before it starts: trials (warm-up trials included)
// and their cool-down plus measurement seconds. Calibration and warm-up
// iterations come on top; their length is only known once calibrated.
struct PlannedWork {
    std::size_t trials = 0;
    double seconds = 0.0;
};
[[nodiscard]] PlannedWork planned_work(const ProfilePlan& plan);
// "planned: 50 trials, about 5.2 min of measurement and cool-down (plus calibration and 10 warm-up iterations per trial)"
[[nodiscard]] std::string describe_planned_work(const ProfilePlan& plan);

}  // namespace zeus::cli
