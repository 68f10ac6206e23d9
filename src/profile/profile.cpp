// Thermally stable profiling; see include/zeus/profile/profile.hpp and
// docs/profiling.md. Follows the original's zeus/profile.py step by step.
#include "zeus/profile/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "progress_tracker.hpp"

namespace zeus::profile {
namespace {

constexpr std::string_view kTrialWindow = "__zeus_profile_run_trial";
constexpr std::string_view kMeasurementDuration = "measurement_duration";
constexpr std::string_view kCooldownDuration = "cooldown_duration";

// printf rounds the exact binary value half-to-even, as Python's format() does.
std::string fixed(double value, int precision) {
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%.*f", precision, value);
    if (n < 0) return {};
    if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
    std::string big(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), "%.*f", precision, value);
    big.resize(static_cast<std::size_t>(n));
    return big;
}

// "mean=… J  std=… J  temp_before=… °C  temp_after=… °C  [TAG]", shared by both __str__s.
std::string stats_suffix(const SweepResult& e) {
    std::string s;
    s += "mean=" + fixed(e.energy_mean, 4) + " J  ";
    s += "std=" + fixed(e.energy_std, 4) + " J  ";
    s += "temp_before=" + fixed(e.avg_temperature_before, 1) + " \u00b0C  ";
    s += "temp_after=" + fixed(e.avg_temperature_after, 1) + " \u00b0C  ";
    s += e.is_valid ? "[VALID]" : "[INVALID]";
    return s;
}

Error invalid(std::string message) { return Error{ErrorCode::InvalidArgument, std::move(message), {}, 0}; }

void sleep_seconds(double seconds) {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

Result<double> average_gpu_temperature(const ProfileContext& ctx) {
    const auto& indices = ctx.monitor.gpu_indices();
    if (indices.empty()) return Error{ErrorCode::InvalidState, "the energy monitor is monitoring zero GPUs", {}, 0};
    double sum = 0.0;
    for (const unsigned index : indices) {
        auto gpu = ctx.gpus.at(index);
        if (!gpu) return gpu.error();
        auto t = (*gpu)->temperature();
        if (!t) return t.error();
        sum += t->count();
    }
    return sum / static_cast<double>(indices.size());
}

std::string count_of(std::size_t done, std::size_t total) {
    return std::to_string(done) + "/" + std::to_string(total);
}

// Combines this rank's values with the other ranks' (nothing to do alone).
Result<std::vector<double>> reduce(const ProfileContext& ctx, std::vector<double> values, ReduceOp op) {
    if (ctx.communicator == nullptr) return values;
    return ctx.communicator->all_reduce(std::move(values), op);
}

int world_size(const ProfileContext& ctx) { return ctx.communicator == nullptr ? 1 : ctx.communicator->size(); }

Status check_common(std::size_t num_trials, double threshold) {
    if (num_trials == 0) return invalid("num_trials must be at least 1");
    if (std::isnan(threshold)) return invalid("trial_stddev_threshold must be a number");
    return {};
}

Status check_durations(const std::vector<double>& values, std::string_view what) {
    for (const double v : values) {
        if (!std::isfinite(v)) return invalid(std::string(what) + " must be finite");
    }
    return {};
}

struct SweepArgs {
    std::vector<double> sweep_values;
    double fixed_value = 0.0;
    bool is_cooldown_sweep = false;
    std::size_t num_trials = 0;
    std::size_t num_warmup_trials = 0;
    double trial_stddev_threshold = 0.0;
    std::size_t num_warmup_iterations = 0;
    double iteration_duration = 0.0;
};

double warmup_measurement(const SweepArgs& a) {
    return a.is_cooldown_sweep ? a.fixed_value : *std::max_element(a.sweep_values.begin(), a.sweep_values.end());
}

// Adds the sweep's trials to the tracker's plan (for the ETA).
void plan_sweep(ProgressTracker& progress, const SweepArgs& a) {
    progress.plan(a.num_warmup_trials, planned_trial_seconds(0.0, warmup_measurement(a), 0, a.iteration_duration));
    for (const double val : a.sweep_values) {
        const double cooldown = a.is_cooldown_sweep ? val : a.fixed_value;
        const double measurement = a.is_cooldown_sweep ? a.fixed_value : val;
        progress.plan(a.num_trials,
                      planned_trial_seconds(cooldown, measurement, a.num_warmup_iterations, a.iteration_duration));
    }
}

Result<SweepReport> sweep(const ProfileContext& ctx, const Target& target, const SweepArgs& a,
                          ProgressTracker& progress) {
    const std::string_view sweep_name = a.is_cooldown_sweep ? kCooldownDuration : kMeasurementDuration;
    progress.note(std::string(a.is_cooldown_sweep ? "Sweeping cooldown_duration (measurement fixed at "
                                                  : "Sweeping measurement_duration (cooldown fixed at ") +
                  fixed(a.fixed_value, 1) + " s)");
    if (a.num_warmup_trials > 0) {
        // Warm-up trials: no cool-down, no warm-up iterations, the longest window.
        const double measure = warmup_measurement(a);
        progress.note("Running " + std::to_string(a.num_warmup_trials) + " warmup trial(s)");
        for (std::size_t i = 0; i < a.num_warmup_trials; ++i) {
            auto trial = run_trial(ctx, target, 0.0, measure, 0, a.iteration_duration);
            if (!trial) return trial.error();
            progress.trial_done(planned_trial_seconds(0.0, measure, 0, a.iteration_duration),
                                "Warmup trial " + count_of(i + 1, a.num_warmup_trials) + " done");
        }
    }
    SweepReport report;
    for (const double val : a.sweep_values) {
        const double cooldown = a.is_cooldown_sweep ? val : a.fixed_value;
        const double measurement = a.is_cooldown_sweep ? a.fixed_value : val;
        const double planned =
            planned_trial_seconds(cooldown, measurement, a.num_warmup_iterations, a.iteration_duration);
        progress.note("Starting " + std::string(sweep_name) + "=" + fixed(val, 1) + " s  [" +
                      std::to_string(a.num_trials) + " trials]");
        std::vector<TrialResult> trials;
        trials.reserve(a.num_trials);
        for (std::size_t i = 0; i < a.num_trials; ++i) {
            auto trial = run_trial(ctx, target, cooldown, measurement, a.num_warmup_iterations, a.iteration_duration);
            if (!trial) return trial.error();
            trials.push_back(*trial);
            progress.trial_done(planned, "Trial " + count_of(i + 1, a.num_trials) + " done");
        }
        report.entries.push_back(build_sweep_result(measurement, cooldown, std::move(trials), a.trial_stddev_threshold));
    }
    report.sweep_param = {std::string(a.is_cooldown_sweep ? kCooldownDuration : kMeasurementDuration), a.sweep_values};
    report.fixed_param = {std::string(a.is_cooldown_sweep ? kMeasurementDuration : kCooldownDuration), a.fixed_value};
    return report;
}

Result<double> calibrate(const ProfileContext& ctx, const Target& target, std::size_t warmup, std::size_t calib,
                         ProgressTracker& progress) {
    auto duration = calibrate_iteration_duration(ctx, target, warmup, calib);
    if (duration) progress.note("Calibrated iteration duration: " + fixed(*duration * 1000.0, 3) + " ms");
    return duration;
}

Result<double> iteration_duration_or_calibrate(const ProfileContext& ctx, const Target& target,
                                               std::optional<double> given, std::size_t warmup, std::size_t calib,
                                               ProgressTracker& progress) {
    if (given) return *given;
    return calibrate(ctx, target, warmup, calib, progress);
}

}  // namespace

std::string SweepResult::to_string() const {
    return "measurement=" + fixed(measurement_duration, 1) + " s  " + "cooldown=" + fixed(cooldown_duration, 1) +
           " s  " + stats_suffix(*this);
}

std::string SweepReport::to_string() const {
    const std::string& sweep_name = sweep_param.first;
    const bool by_cooldown = sweep_name == kCooldownDuration;
    std::vector<std::string> prefixes;
    std::size_t width = 0;
    for (const auto& e : entries) {
        prefixes.push_back(sweep_name + "=" + fixed(by_cooldown ? e.cooldown_duration : e.measurement_duration, 1) +
                           " s");
        width = std::max(width, prefixes.back().size());
    }
    std::string out = "Sweep " + sweep_name + " (fixed " + fixed_param.first + "=" + fixed(fixed_param.second, 1) +
                      " s):";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::string prefix = prefixes[i];
        prefix.resize(width, ' ');
        out += "\n  " + prefix + "  " + stats_suffix(entries[i]);
    }
    return out;
}

SweepResult build_sweep_result(double measurement_duration, double cooldown_duration, std::vector<TrialResult> trials,
                               double trial_stddev_threshold) {
    SweepResult r;
    r.measurement_duration = measurement_duration;
    r.cooldown_duration = cooldown_duration;
    const auto n = static_cast<double>(trials.size());
    if (!trials.empty()) {
        double sum = 0.0;
        for (const auto& t : trials) {
            sum += t.energy_per_iter;
            r.avg_temperature_before += t.temperature_before;
            r.avg_temperature_after += t.temperature_after;
            r.avg_total_time += t.total_time;
            r.avg_total_energy += t.total_energy;
        }
        r.energy_mean = sum / n;
        r.avg_temperature_before /= n;
        r.avg_temperature_after /= n;
        r.avg_total_time /= n;
        r.avg_total_energy /= n;
        if (trials.size() >= 2) {
            double ss = 0.0;
            for (const auto& t : trials) ss += (t.energy_per_iter - r.energy_mean) * (t.energy_per_iter - r.energy_mean);
            r.energy_std = std::sqrt(ss / (n - 1.0));
        }
    }
    r.is_valid = r.energy_std < trial_stddev_threshold;
    r.trials = std::move(trials);
    return r;
}

const std::vector<double>& default_search_range() {
    static const std::vector<double> range{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0};
    return range;
}

Result<double> calibrate_iteration_duration(const ProfileContext& ctx, const Target& target,
                                            std::size_t num_warmup_iterations,
                                            std::size_t num_calibration_iterations) {
    if (num_calibration_iterations == 0) return invalid("num_calibration_iterations must be at least 1");
    for (std::size_t i = 0; i < num_warmup_iterations; ++i) target();
    if (ctx.sync) ctx.sync(ctx.monitor.gpu_indices());
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < num_calibration_iterations; ++i) target();
    if (ctx.sync) ctx.sync(ctx.monitor.gpu_indices());
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    // Every rank must run the same number of iterations per window: the slowest rank's time.
    auto slowest = reduce(ctx, {elapsed.count() / static_cast<double>(num_calibration_iterations)}, ReduceOp::Max);
    if (!slowest) return slowest.error();
    return slowest->at(0);
}

Result<TrialResult> run_trial(const ProfileContext& ctx, const Target& target, double cooldown_duration,
                              double measurement_duration, std::size_t num_warmup_iterations,
                              double iteration_duration) {
    if (!(iteration_duration > 0.0) || !std::isfinite(iteration_duration)) {
        return invalid("iteration_duration must be a positive number of seconds");
    }
    if (std::isnan(measurement_duration) || std::isnan(cooldown_duration)) return invalid("durations must be numbers");
    const double ratio = std::floor(measurement_duration / iteration_duration);
    if (ratio > 1e15) return invalid("measurement_duration / iteration_duration is too large");
    const std::size_t iterations = ratio < 1.0 ? 1 : static_cast<std::size_t>(ratio);

    sleep_seconds(cooldown_duration);
    auto before = average_gpu_temperature(ctx);
    if (!before) return before.error();

    for (std::size_t i = 0; i < num_warmup_iterations; ++i) target();

    if (auto begun = ctx.monitor.begin_window(kTrialWindow); !begun) return begun.error();
    for (std::size_t i = 0; i < iterations; ++i) target();
    auto m = ctx.monitor.end_window(kTrialWindow);
    if (!m) return m.error();

    auto after = average_gpu_temperature(ctx);
    if (!after) return after.error();

    // Energy adds up over the ranks' GPUs, the window lasts as long as the
    // slowest rank's, and temperatures are averaged over the ranks.
    auto sums = reduce(ctx, {m->total_gpu_energy().count(), *before, *after}, ReduceOp::Sum);
    if (!sums) return sums.error();
    auto longest = reduce(ctx, {m->time.count()}, ReduceOp::Max);
    if (!longest) return longest.error();
    const auto ranks = static_cast<double>(world_size(ctx));

    TrialResult r;
    r.total_energy = sums->at(0);
    r.total_time = longest->at(0);
    r.iterations = iterations;
    r.energy_per_iter = r.total_energy / static_cast<double>(iterations);
    r.time_per_iter = r.total_time / static_cast<double>(iterations);
    r.temperature_before = sums->at(1) / ranks;
    r.temperature_after = sums->at(2) / ranks;
    return r;
}

namespace {

// One sweep over one parameter with the other fixed: what the measurement
// and the cool-down profilers share.
template <class Options>
Result<SweepReport> single_sweep(const ProfileContext& ctx, const Target& target, const Options& o,
                                 const std::vector<double>& range, double fixed_value, bool is_cooldown_sweep,
                                 const char* what, ProgressTracker* shared_progress) {
    ProgressTracker own_progress(ctx);
    ProgressTracker& progress = shared_progress != nullptr ? *shared_progress : own_progress;
    if (auto s = check_common(o.num_trials, o.trial_stddev_threshold); !s) return s.error();
    SweepArgs a;
    a.sweep_values = range.empty() ? default_search_range() : range;
    if (auto s = check_durations(a.sweep_values, what); !s) return s.error();
    auto iteration = iteration_duration_or_calibrate(ctx, target, o.iteration_duration, o.num_warmup_iterations,
                                                     o.num_calibration_iterations, progress);
    if (!iteration) return iteration.error();
    a.fixed_value = fixed_value;
    a.is_cooldown_sweep = is_cooldown_sweep;
    a.num_trials = o.num_trials;
    a.num_warmup_trials = o.num_warmup_trials;
    a.trial_stddev_threshold = o.trial_stddev_threshold;
    a.num_warmup_iterations = o.num_warmup_iterations;
    a.iteration_duration = *iteration;
    // A shared tracker (profile_parameters) has planned both sweeps already.
    if (shared_progress == nullptr) plan_sweep(progress, a);
    return sweep(ctx, target, a, progress);
}

Result<SweepReport> measurement_sweep(const ProfileContext& ctx, const Target& target,
                                      const MeasurementSweepOptions& o, ProgressTracker* progress) {
    return single_sweep(ctx, target, o, o.measurement_duration_search_range, o.cooldown_duration, false,
                        "measurement durations", progress);
}

Result<SweepReport> cooldown_sweep(const ProfileContext& ctx, const Target& target, const CooldownSweepOptions& o,
                                   ProgressTracker* progress) {
    return single_sweep(ctx, target, o, o.cooldown_duration_search_range, o.measurement_duration, true,
                        "cooldown durations", progress);
}

}  // namespace

Result<SweepReport> profile_measurement_duration(const ProfileContext& ctx, const Target& target,
                                                 const MeasurementSweepOptions& o) {
    return measurement_sweep(ctx, target, o, nullptr);
}

Result<SweepReport> profile_cooldown_duration(const ProfileContext& ctx, const Target& target,
                                              const CooldownSweepOptions& o) {
    return cooldown_sweep(ctx, target, o, nullptr);
}

Result<std::pair<SweepReport, SweepReport>> profile_parameters(const ProfileContext& ctx, const Target& target,
                                                               const ParameterProfileOptions& o) {
    if (auto s = check_common(o.num_trials, o.trial_stddev_threshold); !s) return s.error();
    const std::vector<double>& m_range =
        o.measurement_duration_search_range.empty() ? default_search_range() : o.measurement_duration_search_range;
    const std::vector<double>& c_range =
        o.cooldown_duration_search_range.empty() ? default_search_range() : o.cooldown_duration_search_range;
    if (auto s = check_durations(m_range, "measurement durations"); !s) return s.error();
    if (auto s = check_durations(c_range, "cooldown durations"); !s) return s.error();

    ProgressTracker progress(ctx);
    auto iteration = calibrate(ctx, target, o.num_warmup_iterations, o.num_calibration_iterations, progress);
    if (!iteration) return iteration.error();

    MeasurementSweepOptions mo;
    mo.measurement_duration_search_range = m_range;
    mo.cooldown_duration = *std::max_element(c_range.begin(), c_range.end());
    mo.num_trials = o.num_trials;
    mo.num_warmup_trials = o.num_warmup_trials;
    mo.trial_stddev_threshold = o.trial_stddev_threshold;
    mo.num_warmup_iterations = o.num_warmup_iterations;
    mo.num_calibration_iterations = o.num_calibration_iterations;
    mo.iteration_duration = *iteration;

    CooldownSweepOptions co;
    co.cooldown_duration_search_range = c_range;
    co.measurement_duration = *std::max_element(m_range.begin(), m_range.end());
    co.num_trials = o.num_trials;
    co.num_warmup_trials = 0;  // the GPU is warm after the first sweep
    co.trial_stddev_threshold = o.trial_stddev_threshold;
    co.num_warmup_iterations = o.num_warmup_iterations;
    co.num_calibration_iterations = o.num_calibration_iterations;
    co.iteration_duration = *iteration;

    // Both sweeps in the plan from the start, so the ETA covers the whole call.
    for (const bool by_cooldown : {false, true}) {
        SweepArgs a;
        a.sweep_values = by_cooldown ? c_range : m_range;
        a.fixed_value = by_cooldown ? co.measurement_duration : mo.cooldown_duration;
        a.is_cooldown_sweep = by_cooldown;
        a.num_trials = o.num_trials;
        a.num_warmup_trials = by_cooldown ? co.num_warmup_trials : mo.num_warmup_trials;
        a.num_warmup_iterations = o.num_warmup_iterations;
        a.iteration_duration = *iteration;
        plan_sweep(progress, a);
    }
    auto measurement_report = measurement_sweep(ctx, target, mo, &progress);
    if (!measurement_report) return measurement_report.error();
    auto cooldown_report = cooldown_sweep(ctx, target, co, &progress);
    if (!cooldown_report) return cooldown_report.error();

    return std::pair<SweepReport, SweepReport>{std::move(measurement_report).value(),
                                               std::move(cooldown_report).value()};
}

Result<TrialResult> measure(const ProfileContext& ctx, const Target& target, const MeasureOptions& o) {
    if (o.warmup_settle_duration && !(*o.warmup_settle_duration >= 0.0)) {
        return Error{
            ErrorCode::InvalidArgument, "warmup_settle_duration must be non-negative",
            fmt::format("give the seconds to run the workload before the window (got {})", *o.warmup_settle_duration),
            0};
    }
    ProgressTracker progress(ctx);
    auto iteration = calibrate(ctx, target, o.num_warmup_iterations, o.num_calibration_iterations, progress);
    if (!iteration) return iteration.error();
    std::size_t warmup = o.num_warmup_iterations;
    if (o.warmup_settle_duration) warmup = static_cast<std::size_t>(*o.warmup_settle_duration / *iteration);
    return run_trial(ctx, target, o.cooldown_duration, o.measurement_duration, warmup, *iteration);
}

}  // namespace zeus::profile
