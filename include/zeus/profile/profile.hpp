// Thermally stable energy profiling (the original's zeus.profile): finds the
// measurement window and the idle cool-down before it that give low-variance
// energy readings for a workload, and measures it with them.
//
//   zeus::profile::ProfileContext ctx{gpus, *monitor};
//   auto [measurement, cooldown] =
//       zeus::profile::profile_parameters(ctx, [&] { train_step(); }).value();
//   std::cout << measurement.to_string() << '\n' << cooldown.to_string() << '\n';
//
// Single trial:
//   |<-- cooldown -->|           |<------ measurement_duration ------>|
//   +----- idle -----+-- warmup --+--iter--iter-- ... --iter-----------+
//                                 +-- energy_per_iter measured --------+
//
// A sweep first runs `num_warmup_trials` throwaway trials (no cool-down, no
// warm-up iterations, the longest measurement duration), then `num_trials`
// trials per swept value. A value is VALID when the sample standard deviation
// of energy_per_iter across its trials is below `trial_stddev_threshold`.
// Durations are in seconds, energies in joules, temperatures in °C.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/profile/communicator.hpp"
#include "zeus/profile/progress.hpp"

namespace zeus::profile {

// The workload: one iteration per call.
using Target = std::function<void()>;

// Result of a single measurement trial.
struct TrialResult {
    double energy_per_iter = 0.0;     // J per iteration
    double time_per_iter = 0.0;       // s per iteration
    double total_energy = 0.0;        // J over the measured window (all monitored GPUs)
    double total_time = 0.0;          // s, the measured window
    std::size_t iterations = 0;       // iterations in the window
    double temperature_before = 0.0;  // °C, mean over monitored GPUs, before the warm-up iterations
    double temperature_after = 0.0;   // °C, mean over monitored GPUs, after the window
};

// One swept value, aggregated over its trials.
struct SweepResult {
    double measurement_duration = 0.0;
    double cooldown_duration = 0.0;
    std::vector<TrialResult> trials;
    double energy_mean = 0.0;  // mean energy_per_iter
    double energy_std = 0.0;   // sample standard deviation of energy_per_iter (0 with fewer than 2 trials)
    double avg_temperature_before = 0.0;
    double avg_temperature_after = 0.0;
    double avg_total_time = 0.0;
    double avg_total_energy = 0.0;
    bool is_valid = false;  // energy_std < trial_stddev_threshold

    // One line, as the original's __str__:
    // "measurement=5.0 s  cooldown=10.0 s  mean=1.2345 J  std=0.0012 J  temp_before=41.0 °C  temp_after=63.0 °C  [VALID]"
    [[nodiscard]] std::string to_string() const;
};

// A measurement-duration or cool-down-duration sweep.
struct SweepReport {
    std::pair<std::string, std::vector<double>> sweep_param;  // ("measurement_duration" | "cooldown_duration", values)
    std::pair<std::string, double> fixed_param;               // (the other name, its value)
    std::vector<SweepResult> entries;                         // one per swept value, in sweep order

    // A header line, then one line per entry with the swept value left-aligned
    // to the longest one, as the original's __str__. (With no entries the
    // original raises; this returns the header alone.)
    [[nodiscard]] std::string to_string() const;
};

// Aggregates trials (at least one) into a SweepResult.
[[nodiscard]] SweepResult build_sweep_result(double measurement_duration, double cooldown_duration,
                                             std::vector<TrialResult> trials, double trial_stddev_threshold);

// What the profiler measures with. `gpus` and `monitor` must outlive the calls;
// temperatures are read from the monitor's GPUs (monitor.gpu_indices()).
struct ProfileContext {
    const Gpus& gpus;
    EnergyMonitor& monitor;
    // Waits for queued GPU work around the calibration timing (pass the one
    // given to the monitor); empty: none.
    SyncFunction sync = {};
    // Several processes, each measuring its own GPU(s): trials sum energy,
    // take the longest time and average temperatures over the ranks, and
    // the calibrated iteration time is the longest of the ranks'. Every rank
    // must make the same calls with the same options. Null: this process only.
    Communicator* communicator = nullptr;
    // Told about calibration, phases and finished trials; called on rank 0
    // only. Empty: nothing is reported.
    ProgressFunction progress = {};
};

// [1.0, 2.0, ..., 10.0]
[[nodiscard]] const std::vector<double>& default_search_range();

struct MeasurementSweepOptions {
    std::vector<double> measurement_duration_search_range;  // empty: default_search_range()
    double cooldown_duration = 10.0;
    std::size_t num_trials = 10;
    std::size_t num_warmup_trials = 2;
    double trial_stddev_threshold = 0.01;  // J
    std::size_t num_warmup_iterations = 10;
    std::size_t num_calibration_iterations = 100;
    std::optional<double> iteration_duration;  // s; nullopt: calibrate first
};

struct CooldownSweepOptions {
    std::vector<double> cooldown_duration_search_range;  // empty: default_search_range()
    double measurement_duration = 10.0;
    std::size_t num_trials = 10;
    std::size_t num_warmup_trials = 2;
    double trial_stddev_threshold = 0.01;
    std::size_t num_warmup_iterations = 10;
    std::size_t num_calibration_iterations = 100;
    std::optional<double> iteration_duration;
};

struct ParameterProfileOptions {
    std::vector<double> measurement_duration_search_range;  // empty: default_search_range()
    std::vector<double> cooldown_duration_search_range;     // empty: default_search_range()
    std::size_t num_trials = 10;
    std::size_t num_warmup_trials = 2;  // run once, before the first sweep only
    double trial_stddev_threshold = 0.01;
    std::size_t num_warmup_iterations = 10;
    std::size_t num_calibration_iterations = 100;
};

struct MeasureOptions {
    double measurement_duration = 0.0;  // s
    double cooldown_duration = 0.0;     // s
    std::size_t num_warmup_iterations = 10;
    std::size_t num_calibration_iterations = 100;
    // The trial's warm-up as a duration (s) instead: floor(settle / calibrated
    // iteration time) iterations (the calibration keeps num_warmup_iterations).
    // Negative: InvalidArgument. nullopt: num_warmup_iterations.
    std::optional<double> warmup_settle_duration;
};

// Runs `num_warmup_iterations`, then times `num_calibration_iterations`
// (synchronised at both ends) on the monotonic clock; returns seconds per
// iteration. InvalidArgument when num_calibration_iterations is 0.
[[nodiscard]] Result<double> calibrate_iteration_duration(const ProfileContext& ctx, const Target& target,
                                                          std::size_t num_warmup_iterations,
                                                          std::size_t num_calibration_iterations);

// One trial: sleep cooldown (if > 0), read the temperature, warm-up
// iterations, a window over max(1, floor(measurement / iteration_duration))
// iterations, read the temperature. InvalidArgument for a non-positive or
// non-finite iteration duration; monitor and temperature errors pass through.
[[nodiscard]] Result<TrialResult> run_trial(const ProfileContext& ctx, const Target& target, double cooldown_duration,
                                            double measurement_duration, std::size_t num_warmup_iterations,
                                            double iteration_duration);

// Sweeps measurement durations with the cool-down fixed.
[[nodiscard]] Result<SweepReport> profile_measurement_duration(const ProfileContext& ctx, const Target& target,
                                                               const MeasurementSweepOptions& options = {});
// Sweeps cool-down durations with the measurement duration fixed.
[[nodiscard]] Result<SweepReport> profile_cooldown_duration(const ProfileContext& ctx, const Target& target,
                                                            const CooldownSweepOptions& options = {});
// Calibrates once, sweeps measurement durations (cool-down fixed at the
// maximum of its range), then cool-down durations (measurement fixed at the
// maximum of its range). Returns (measurement report, cool-down report).
[[nodiscard]] Result<std::pair<SweepReport, SweepReport>> profile_parameters(const ProfileContext& ctx,
                                                                             const Target& target,
                                                                             const ParameterProfileOptions& options = {});
// Calibrates, then runs one trial with the given durations.
[[nodiscard]] Result<TrialResult> measure(const ProfileContext& ctx, const Target& target,
                                          const MeasureOptions& options);

}  // namespace zeus::profile
