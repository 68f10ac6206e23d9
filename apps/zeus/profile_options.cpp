#include "profile_options.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>

namespace zeus::cli {
namespace {

Error bad(std::string message, std::string hint) {
    return Error{ErrorCode::InvalidArgument, std::move(message), std::move(hint)};
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

Result<std::size_t> count(std::string_view option, long long value, long long minimum, std::string_view why) {
    if (value < minimum) {
        return bad(fmt::format("{} {}: must be at least {}", option, value, minimum), std::string(why));
    }
    return static_cast<std::size_t>(value);
}

Result<double> duration(std::string_view option, double value, bool strict) {
    if (!std::isfinite(value) || value < 0.0 || (strict && value == 0.0) || value > kMaxDurationS) {
        return bad(fmt::format("{} {}: must be a finite number of seconds {} 0 and at most {:g} (a day)", option, value,
                               strict ? ">" : ">=", kMaxDurationS),
                   "give seconds, e.g. 5 or 0.5");
    }
    return value;
}

// An option the mode would ignore, or one that fixes what the mode sweeps.
std::optional<Error> contradictory_options(const ProfileOptions& o, ProfileMode mode) {
    const ProfileOptions defaults;
    const bool measurement_range = o.measurement_range != defaults.measurement_range;
    const bool cooldown_range = o.cooldown_range != defaults.cooldown_range;
    const std::string m(mode_name(mode));
    auto clash = [&](std::string_view given, std::string_view why, std::string_view fix) {
        return bad(fmt::format("--mode {} {} {}", m, why, given), std::string(fix));
    };
    switch (mode) {
        case ProfileMode::Parameters:
            if (o.measurement_duration) {
                return clash("--measurement-duration", "sweeps the measurement duration, so it takes no",
                             "give the durations to try with --measurement-range, or use --mode cooldown to hold it");
            }
            if (o.cooldown_duration) {
                return clash("--cooldown-duration", "sweeps the cool-down duration, so it takes no",
                             "give the durations to try with --cooldown-range, or use --mode measurement to hold it");
            }
            break;
        case ProfileMode::Measurement:
            if (o.measurement_duration) {
                return clash("--measurement-duration", "sweeps the measurement duration, so it takes no",
                             "give the durations to try with --measurement-range");
            }
            if (cooldown_range) {
                return clash("--cooldown-range", "holds the cool-down fixed, so it takes no",
                             "hold it with --cooldown-duration, or use --mode parameters to sweep both");
            }
            break;
        case ProfileMode::Cooldown:
            if (o.cooldown_duration) {
                return clash("--cooldown-duration", "sweeps the cool-down duration, so it takes no",
                             "give the durations to try with --cooldown-range");
            }
            if (measurement_range) {
                return clash("--measurement-range", "holds the measurement duration fixed, so it takes no",
                             "hold it with --measurement-duration, or use --mode parameters to sweep both");
            }
            break;
        case ProfileMode::Measure:
            if (measurement_range || cooldown_range) {
                return clash(measurement_range ? "--measurement-range" : "--cooldown-range",
                             "runs one trial at --measurement-duration and --cooldown-duration, so it takes no",
                             "drop the range, or use --mode parameters to sweep");
            }
            break;
    }
    return std::nullopt;
}

}  // namespace

std::string_view mode_name(ProfileMode mode) {
    switch (mode) {
        case ProfileMode::Parameters: return "parameters";
        case ProfileMode::Measurement: return "measurement";
        case ProfileMode::Cooldown: return "cooldown";
        case ProfileMode::Measure: return "measure";
    }
    return "parameters";
}

Result<std::vector<double>> parse_duration_list(std::string_view option, std::string_view text, double minimum,
                                                bool strict) {
    std::vector<double> values;
    const std::string hint = fmt::format("give comma-separated seconds, e.g. {} 1,2,5", option);
    if (trimmed(text).empty()) return bad(fmt::format("{}: no durations given", option), hint);
    const std::string_view whole = text;
    while (true) {
        const auto comma = text.find(',');
        const std::string entry(trimmed(text.substr(0, comma)));
        char* end = nullptr;
        errno = 0;
        const double v = entry.empty() ? 0.0 : std::strtod(entry.c_str(), &end);
        if (entry.empty() || end != entry.c_str() + entry.size() || errno == ERANGE || !std::isfinite(v)) {
            return bad(fmt::format("{} {}: '{}' is not a number of seconds", option, whole, entry), hint);
        }
        if (v < minimum || (strict && v == minimum) || v > kMaxDurationS) {
            return bad(fmt::format("{}: {} s is out of range (each duration must be {} {} s and at most {:g} s, a day)",
                                   option, entry, strict ? ">" : ">=", minimum, kMaxDurationS),
                       hint);
        }
        values.push_back(v);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return values;
}

namespace {

Status plan_mode_and_format(const ProfileOptions& o, ProfilePlan& p) {
    if (o.mode == "parameters") {
        p.mode = ProfileMode::Parameters;
    } else if (o.mode == "measurement") {
        p.mode = ProfileMode::Measurement;
    } else if (o.mode == "cooldown") {
        p.mode = ProfileMode::Cooldown;
    } else if (o.mode == "measure") {
        p.mode = ProfileMode::Measure;
    } else {
        return bad(fmt::format("--mode {}: unknown mode", o.mode), "use parameters, measurement, cooldown or measure");
    }
    if (o.format == "human") {
        p.format = ProfileFormat::Human;
    } else if (o.format == "json") {
        p.format = ProfileFormat::Json;
    } else {
        return bad(fmt::format("--format {}: unknown format for profile reports", o.format), "use human or json");
    }
    return {};
}

// Exactly one of a command and --simulated-work, the latter with a valid utilization.
Status check_work(const ProfileOptions& o) {
    if (o.command.empty() && !o.simulated_work) {
        return bad("nothing to profile: no command and no --simulated-work",
                   "put the command after --, as in zeus profile -- ./step.sh, or use --simulated-work 0.05");
    }
    if (!o.command.empty() && o.simulated_work) {
        return bad("both a command and --simulated-work were given", "profile either the command or the simulated work");
    }
    if (o.simulated_work) {
        if (auto w = duration("--simulated-work", *o.simulated_work, true); !w) return w.error();
        if (!(o.simulated_util > 0.0 && o.simulated_util <= 1.0)) {
            return bad(fmt::format("--simulated-util {}: must be in (0, 1]", o.simulated_util),
                       "give the fraction of the GPU the work uses, e.g. 1 or 0.5");
        }
    }
    return {};
}

// The swept ranges, then the fixed durations the mode takes.
Status plan_durations(const ProfileOptions& o, ProfilePlan& p) {
    auto m = parse_duration_list("--measurement-range", o.measurement_range, 0.0, true);
    if (!m) return m.error();
    p.measurement_range = std::move(m).value();
    auto c = parse_duration_list("--cooldown-range", o.cooldown_range, 0.0, false);
    if (!c) return c.error();
    p.cooldown_range = std::move(c).value();

    if (auto contradiction = contradictory_options(o, p.mode)) return *contradiction;
    if (p.mode == ProfileMode::Measure && (!o.measurement_duration || !o.cooldown_duration)) {
        return bad("--mode measure needs both --measurement-duration and --cooldown-duration",
                   "run --mode parameters first to find them, e.g. --measurement-duration 5 --cooldown-duration 3");
    }
    if (o.measurement_duration) {
        auto v = duration("--measurement-duration", *o.measurement_duration, true);
        if (!v) return v.error();
        p.measurement_duration = *v;
    }
    if (o.cooldown_duration) {
        auto v = duration("--cooldown-duration", *o.cooldown_duration, false);
        if (!v) return v.error();
        p.cooldown_duration = *v;
    }
    if (o.iteration_duration) {
        auto v = duration("--iteration-duration", *o.iteration_duration, true);
        if (!v) return v.error();
        p.iteration_duration = *v;
    }
    return {};
}

// Trial and iteration counts, and the stability threshold.
Status plan_trials(const ProfileOptions& o, ProfilePlan& p) {
    auto trials = count("--trials", o.trials, 1, "each swept value needs trials; 2 or more give a standard deviation");
    if (!trials) return trials.error();
    p.trials = *trials;
    auto warmup_trials = count("--warmup-trials", o.warmup_trials, 0, "use 0 to skip warm-up trials");
    if (!warmup_trials) return warmup_trials.error();
    p.warmup_trials = *warmup_trials;
    auto warmup_iterations = count("--warmup-iterations", o.warmup_iterations, 0, "use 0 to skip warm-up iterations");
    if (!warmup_iterations) return warmup_iterations.error();
    p.warmup_iterations = *warmup_iterations;
    auto calibration =
        count("--calibration-iterations", o.calibration_iterations, 1, "calibration times at least one iteration");
    if (!calibration) return calibration.error();
    p.calibration_iterations = *calibration;
    if (!std::isfinite(o.threshold) || o.threshold <= 0.0) {
        return bad(fmt::format("--threshold {}: must be a positive number of joules", o.threshold),
                   "give the largest acceptable standard deviation of energy per iteration, e.g. 0.01");
    }
    p.threshold = o.threshold;
    return {};
}

}  // namespace

Result<ProfilePlan> plan_profile(const ProfileOptions& o) {
    ProfilePlan p;
    if (auto ok = plan_mode_and_format(o, p); !ok) return ok.error();
    if (auto ok = check_work(o); !ok) return ok.error();
    if (auto ok = plan_durations(o, p); !ok) return ok.error();
    if (auto ok = plan_trials(o, p); !ok) return ok.error();
    if (!o.plot.empty() && p.mode == ProfileMode::Measure) {
        return bad("--plot: --mode measure runs a single trial, there is nothing to plot",
                   "use --plot with --mode parameters, measurement or cooldown");
    }
    return p;
}

PlannedWork planned_work(const ProfilePlan& p) {
    const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
    const auto longest = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
    const auto trials = static_cast<double>(p.trials);
    // Each sweep: warm-up trials at its longest window without cool-down, then
    // `trials` trials of cool-down + window per swept value (src/profile/profile.cpp).
    const auto measurement_sweep = [&](double cooldown, std::size_t warmup_trials) {
        return PlannedWork{warmup_trials + p.trials * p.measurement_range.size(),
                           static_cast<double>(warmup_trials) * longest(p.measurement_range) +
                               trials * (sum(p.measurement_range) +
                                         cooldown * static_cast<double>(p.measurement_range.size()))};
    };
    const auto cooldown_sweep = [&](double measurement, std::size_t warmup_trials) {
        return PlannedWork{warmup_trials + p.trials * p.cooldown_range.size(),
                           static_cast<double>(warmup_trials) * measurement +
                               trials * (sum(p.cooldown_range) +
                                         measurement * static_cast<double>(p.cooldown_range.size()))};
    };
    switch (p.mode) {
        case ProfileMode::Parameters: {
            // The second sweep runs warm, without warm-up trials.
            const PlannedWork m = measurement_sweep(longest(p.cooldown_range), p.warmup_trials);
            const PlannedWork c = cooldown_sweep(longest(p.measurement_range), 0);
            return {m.trials + c.trials, m.seconds + c.seconds};
        }
        case ProfileMode::Measurement: return measurement_sweep(p.cooldown_duration, p.warmup_trials);
        case ProfileMode::Cooldown: return cooldown_sweep(p.measurement_duration, p.warmup_trials);
        case ProfileMode::Measure: return {1, p.cooldown_duration + p.measurement_duration};
    }
    return {};
}

std::string describe_planned_work(const ProfilePlan& p) {
    const PlannedWork w = planned_work(p);
    const std::string length = w.seconds < 120.0 ? fmt::format("{:.0f} s", w.seconds)
                               : w.seconds < 7200.0 ? fmt::format("{:.1f} min", w.seconds / 60.0)
                                                    : fmt::format("{:.1f} h", w.seconds / 3600.0);
    return fmt::format("planned: {} trial{}, about {} of measurement and cool-down (plus calibration and {} warm-up "
                       "iteration{} per trial)",
                       w.trials, w.trials == 1 ? "" : "s", length, p.warmup_iterations,
                       p.warmup_iterations == 1 ? "" : "s");
}

}  // namespace zeus::cli
