// The power-limit profile file: what the optimizer measured, saved so that a
// second run skips profiling. The original's format, which both tools read:
//
//   {"measurements": [{"power_limit": 300, "energy": 6224.886, "time": 24.0116}, ...]}
//
// power_limit in W, energy in J, time in s per profiling window, in profiling
// order. This tool adds "profile_steps" (training steps per window) so that
// reports can say "per step"; the original ignores it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

#include "zeus/optimizer/optimum_selector.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::optimizer {

struct PowerLimitProfile {
    std::vector<PowerLimitMeasurement> measurements;
    std::optional<std::size_t> profile_steps;
};

// Errors name the file and the entry that is wrong (missing, non-positive or
// non-numeric power_limit, energy or time) and how to fix it.
[[nodiscard]] Result<PowerLimitProfile> load_power_limit_profile(const std::filesystem::path& path);
// Written to a temporary file next to `path` and renamed over it, so a crash
// never leaves half a profile; parent directories are created.
[[nodiscard]] Status save_power_limit_profile(const std::filesystem::path& path, const PowerLimitProfile& profile);

// The window name the optimizer profiles a limit under, as the original:
// "__GlobalPowerLimitOptimizer_300" (whole watts; fractional watts keep
// their decimals).
[[nodiscard]] std::string power_limit_window_name(Milliwatts limit);
// The limit in a window name made by power_limit_window_name, or nullopt.
[[nodiscard]] std::optional<Milliwatts> power_limit_from_window_name(std::string_view name);

// The measurements in an energy-window CSV log written while the optimizer
// (this one or the original) profiled: one per optimizer window, energy
// summed over the log's GPU columns, in log order. `gpu_count` is the number
// of GPU columns.
struct LoggedPowerLimitProfile {
    std::vector<PowerLimitMeasurement> measurements;
    std::size_t gpu_count = 0;
};
[[nodiscard]] Result<LoggedPowerLimitProfile> read_power_limit_log(const std::filesystem::path& path);

}  // namespace zeus::optimizer
