// `zeus profile [options] -- CMD ARGS...`: finds measurement and cool-down
// durations whose energy per iteration is stable from trial to trial
// (docs/profiling.md). One iteration is one run of the command, or, with
// --simulated-work, a fixed amount of work on every selected simulated GPU.
// Reports go to standard output (human: the original's text; json), progress
// to standard error when it is a terminal.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "child_process.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "measure_session.hpp"
#include "profile_options.hpp"
#include "profile_output.hpp"
#include "status_line.hpp"
#include "zeus/simulation/simulator_api.hpp"
#include "zeus/profile/recommendation.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::cli {
namespace {

// zeus's own failures, apart from the command's exit codes (as `zeus run`).
constexpr int kZeusFailed = 125;

// Thrown by an iteration whose command failed: profiling stops there.
struct IterationFailed {
    std::string what;
    int exit_code = kZeusFailed;
};

profile::Target command_target(const std::vector<std::string>& argv, bool stdout_to_stderr) {
    return [argv, stdout_to_stderr] {
        std::cout.flush();
        auto child = spawn_command(argv, stdout_to_stderr ? ChildStdout::kToStderr : ChildStdout::kInherited);
        if (!child) throw IterationFailed{child.error().describe(), spawn_failure_exit_code(child.error())};
        int raw = 0;
        while (::waitpid(*child, &raw, 0) < 0) {
            if (errno != EINTR) throw IterationFailed{std::string("cannot wait for the command: ") + std::strerror(errno), kZeusFailed};
        }
        const ChildStatus status = ChildStatus::from_wait_status(raw);
        if (status.shell_exit_code() != 0) {
            throw IterationFailed{"the command " + status.describe() + "; profiling needs every iteration to succeed",
                                  status.shell_exit_code()};
        }
    };
}

// The options every sweep shares, from the command line's plan.
template <class SweepOptions>
void set_trial_options(SweepOptions& o, const ProfilePlan& p) {
    o.num_trials = p.trials;
    o.num_warmup_trials = p.warmup_trials;
    o.trial_stddev_threshold = p.threshold;
    o.num_warmup_iterations = p.warmup_iterations;
    o.num_calibration_iterations = p.calibration_iterations;
}

Result<profile::Target> simulated_target(const Gpus& gpus, const std::vector<unsigned>& indices, double seconds,
                                         double utilization) {
    if (!gpus.backend_info().simulated) {
        return Error{ErrorCode::InvalidArgument, "--simulated-work needs the GPU simulator, but these GPUs are real",
                     "add --simulate (or set ZEUS_SIMULATE=1), or profile a command after --"};
    }
    auto api = simulation::SimulatorApi::open(gpus);
    if (!api) return api.error();
    auto work = std::make_shared<simulation::SimulatorApi>(std::move(api).value());
    std::vector<unsigned> physical;
    for (const unsigned i : indices) physical.push_back(gpus[i].identity().physical_index);
    const double units = seconds * utilization;  // work at `utilization` that takes `seconds` at the maximum clock
    return profile::Target([work, physical, units, utilization] {
        auto run_one = [&](unsigned gpu, std::string* error) {
            double elapsed = 0;
            if (work->run_work(gpu, units, utilization, &elapsed) != 0) *error = work->last_error();
        };
        std::vector<std::string> errors(physical.size());
        std::vector<std::thread> others;
        // The GPUs work at the same time, as a data-parallel step would.
        for (std::size_t k = 1; k < physical.size(); ++k) others.emplace_back(run_one, physical[k], &errors[k]);
        run_one(physical[0], &errors[0]);
        for (auto& t : others) t.join();
        for (const auto& e : errors) {
            if (!e.empty()) throw IterationFailed{"simulated work failed: " + e, kZeusFailed};
        }
    });
}

// Progress on standard error, rewritten in place; only for a terminal.
class ProgressPrinter {
  public:
    explicit ProgressPrinter(bool enabled) : enabled_(enabled) {}
    ~ProgressPrinter() { finish(); }
    ProgressPrinter(const ProgressPrinter&) = delete;
    ProgressPrinter& operator=(const ProgressPrinter&) = delete;

    [[nodiscard]] profile::ProgressFunction function() {
        if (!enabled_) return {};
        return [this](const profile::ProgressEvent& e) { status_.show(progress_line(e)); };
    }
    void finish() { status_.finish(); }

  private:
    bool enabled_;
    StatusLine status_;
};

Status write_text_file(std::string_view option, const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::out | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
        return Error{ErrorCode::NoPermission, fmt::format("{} {}: cannot write the file", option, path),
                     "give a path in an existing directory that you may write to"};
    }
    return {};
}

MeasureOptions measure_options_for(const ProfileOptions& options) {
    MeasureOptions measure;
    measure.device = options.device;
    measure.device.simulate = options.device.simulate || options.simulated_work.has_value();
    measure.gpus = options.gpus;
    measure.cpus = "none";  // the profiler measures GPU energy
    // A trial's window begins right after its warm-up: waiting there would
    // let the GPU cool, which is what the profiler controls.
    measure.wait_for_counter_refresh = false;
    measure.window_edges = options.window_edges == "synchronous" ? WindowEdges::Synchronous : WindowEdges::Sampled;
    measure.output = options.output;
    measure.runs_command = !options.command.empty();
    return measure;
}

// What one iteration runs: --simulated-work on the selected GPUs, or the command.
Result<profile::Target> make_target(const ProfileOptions& options, MeasureSession& session) {
    if (options.simulated_work) {
        return simulated_target(session.gpus(), session.gpu_indices(), *options.simulated_work, options.simulated_util);
    }
    return command_target(options.command, session.command_stdout_to_stderr());
}

// What the sweeps found: the sweep reports and their recommendation, or,
// with --mode measure, the one trial.
struct ProfileOutcome {
    std::vector<profile::SweepReport> reports;
    std::optional<profile::Recommendation> recommendation;
    std::optional<profile::TrialResult> single;
};

// Throws IterationFailed when an iteration's command fails.
Result<ProfileOutcome> run_plan(const profile::ProfileContext& ctx, const profile::Target& target,
                                const ProfilePlan& p) {
    ProfileOutcome outcome;
    switch (p.mode) {
        case ProfileMode::Parameters: {
            profile::ParameterProfileOptions o;
            o.measurement_duration_search_range = p.measurement_range;
            o.cooldown_duration_search_range = p.cooldown_range;
            set_trial_options(o, p);
            auto r = profile::profile_parameters(ctx, target, o);
            if (!r) return r.error();
            outcome.recommendation = profile::recommend(r->first, r->second, p.warmup_iterations);
            outcome.reports = {r->first, r->second};
            break;
        }
        case ProfileMode::Measurement: {
            profile::MeasurementSweepOptions o;
            o.measurement_duration_search_range = p.measurement_range;
            o.cooldown_duration = p.cooldown_duration;
            set_trial_options(o, p);
            o.iteration_duration = p.iteration_duration;
            auto r = profile::profile_measurement_duration(ctx, target, o);
            if (!r) return r.error();
            outcome.reports = {*r};
            break;
        }
        case ProfileMode::Cooldown: {
            profile::CooldownSweepOptions o;
            o.cooldown_duration_search_range = p.cooldown_range;
            o.measurement_duration = p.measurement_duration;
            set_trial_options(o, p);
            o.iteration_duration = p.iteration_duration;
            auto r = profile::profile_cooldown_duration(ctx, target, o);
            if (!r) return r.error();
            outcome.reports = {*r};
            break;
        }
        case ProfileMode::Measure: {
            profile::MeasureOptions o;
            o.measurement_duration = p.measurement_duration;
            o.cooldown_duration = p.cooldown_duration;
            o.num_warmup_iterations = p.warmup_iterations;
            o.num_calibration_iterations = p.calibration_iterations;
            auto r = profile::measure(ctx, target, o);
            if (!r) return r.error();
            outcome.single = *r;
            break;
        }
    }
    if (outcome.reports.size() == 1)
        outcome.recommendation = profile::recommend(outcome.reports[0], p.warmup_iterations);
    return outcome;
}

void print_outcome(std::ostream& out, const ProfilePlan& p, const ProfileOutcome& outcome, bool simulated) {
    const auto& single = outcome.single;
    if (p.format == ProfileFormat::Json) {
        nlohmann::json j = single ? nlohmann::json{{"trial", trial_json(*single)},
                                                   {"measurement_duration", p.measurement_duration},
                                                   {"cooldown_duration", p.cooldown_duration},
                                                   {"simulated", simulated}}
                                  : reports_json(outcome.reports, outcome.recommendation, p.threshold, simulated);
        out << json_text(j, 2) << "\n";
    } else if (single) {
        out << fmt::format(
            "measurement={:.1f} s  cooldown={:.1f} s  energy_per_iter={:.4f} J  time_per_iter={:.4f} s  "
            "iterations={}  temp_before={:.1f} \u00b0C  temp_after={:.1f} \u00b0C\n",
            p.measurement_duration, p.cooldown_duration, single->energy_per_iter, single->time_per_iter,
            single->iterations, single->temperature_before, single->temperature_after);
    } else {
        for (const auto& r : outcome.reports) out << r.to_string() << "\n\n";
        if (outcome.recommendation) {
            out << outcome.recommendation->to_string() << "\n";
        } else {
            out << "No recommendation: no swept value is VALID (std < " << p.threshold
                << " J). Try longer durations, more trials or a larger --threshold.\n";
        }
    }
    if (simulated && p.format == ProfileFormat::Human) out << "(GPUs simulated by the Zeus GPU simulator)\n";
    out.flush();
}

int run_profile(const ProfileOptions& options) {
    auto plan = plan_profile(options);
    if (!plan) {
        std::cerr << "zeus: profile: " << plan.error().describe() << "\n";
        return 2;
    }
    if (!options.plot.empty()) {
        if (auto ok = check_writable("--plot", options.plot); !ok) {
            std::cerr << "zeus: profile: " << ok.error().describe() << "\n";
            return 2;
        }
    }
    auto opened = MeasureSession::open(measure_options_for(options), false);
    if (!opened) {
        std::cerr << "zeus: profile: " << opened.error().describe() << "\n";
        return setup_exit_code(opened.error());
    }
    MeasureSession& session = **opened;
    if (session.gpu_indices().empty()) {
        std::cerr << "zeus: profile: no GPU is selected (the profiler measures GPU energy; check --gpus and "
                     "zeus show-env)\n";
        return 2;
    }
    auto target = make_target(options, session);
    if (!target) {
        std::cerr << "zeus: profile: " << target.error().describe() << "\n";
        return setup_exit_code(target.error());
    }

    if (!options.quiet) std::cerr << "zeus: profile: " << describe_planned_work(*plan) << "\n" << std::flush;
    ProgressPrinter printer(!options.quiet && ::isatty(STDERR_FILENO) == 1);
    profile::ProfileContext ctx{session.gpus(), session.monitor()};
    ctx.progress = printer.function();
    const ProfilePlan& p = *plan;

    std::optional<ProfileOutcome> outcome;
    try {
        auto swept = run_plan(ctx, *target, p);
        printer.finish();
        if (!swept) {
            std::cerr << "zeus: profile: " << swept.error().describe() << "\n";
            return 1;
        }
        outcome = std::move(swept).value();
    } catch (const IterationFailed& e) {
        printer.finish();
        std::cerr << "zeus: profile: " << e.what << "\n";
        return e.exit_code;
    }

    print_outcome(session.out(), p, *outcome, session.gpus().backend_info().simulated);
    if (!options.plot.empty()) {
        if (auto ok = write_text_file("--plot", options.plot, render_svg(outcome->reports, p.threshold)); !ok) {
            std::cerr << "zeus: profile: " << ok.error().describe() << "\n";
            return 1;
        }
    }
    return 0;
}

}  // namespace

Command add_profile(CLI::App& parent) {
    auto* cmd = parent.add_subcommand(
        "profile",
        "Find measurement and cool-down durations with stable energy per iteration "
        "(zeus profile [options] -- CMD ..., one iteration = one run of CMD)");
    auto opts = std::make_shared<ProfileOptions>();
    add_device_flags(*cmd, opts->device);
    cmd->add_option("--gpus", opts->gpus, "GPUs to measure: visible indices such as 0,2, or all")
        ->capture_default_str();
    cmd->add_option("--mode", opts->mode,
                    "parameters (both sweeps), measurement (sweep the window), cooldown (sweep the idle time "
                    "before it) or measure (one trial with given durations)")
        ->capture_default_str();
    cmd->add_option("--measurement-range", opts->measurement_range, "Measurement durations to sweep (s, comma-separated)")
        ->capture_default_str();
    cmd->add_option("--cooldown-range", opts->cooldown_range, "Cool-down durations to sweep (s, comma-separated)")
        ->capture_default_str();
    cmd->add_option("--measurement-duration", opts->measurement_duration,
                    "Measurement duration held fixed by --mode cooldown (default 10) and used by --mode measure")
        ->check(positive_number(kMaxDurationS, "s"));
    cmd->add_option("--cooldown-duration", opts->cooldown_duration,
                    "Cool-down held fixed by --mode measurement (default 10) and used by --mode measure")
        ->check(finite_number(0.0, kMaxDurationS, "s"));
    cmd->add_option("--trials", opts->trials, "Trials per swept value")
        ->check(whole_number(1, kMaxCount))
        ->capture_default_str();
    cmd->add_option("--warmup-trials", opts->warmup_trials, "Throwaway trials before the first sweep")
        ->check(whole_number(0, kMaxCount))
        ->capture_default_str();
    cmd->add_option("--threshold", opts->threshold,
                    "A swept value is VALID when the std of energy per iteration is below this (J)")
        ->check(positive_number(1e9, "J"))
        ->capture_default_str();
    cmd->add_option("--warmup-iterations", opts->warmup_iterations, "Iterations before each measured window")
        ->check(whole_number(0, kMaxCount))
        ->capture_default_str();
    cmd->add_option("--calibration-iterations", opts->calibration_iterations,
                    "Iterations timed to calibrate the iteration duration")
        ->check(whole_number(1, kMaxCount))
        ->capture_default_str();
    cmd->add_option("--iteration-duration", opts->iteration_duration,
                    "Seconds per iteration, skipping calibration (measurement and cooldown modes)")
        ->check(positive_number(kMaxDurationS, "s"));
    cmd->add_option("--simulated-work", opts->simulated_work,
                    "Instead of a command: each iteration runs this many seconds of work on every selected "
                    "simulated GPU (implies --simulate)")
        ->check(positive_number(kMaxDurationS, "s"));
    cmd->add_option("--simulated-util", opts->simulated_util, "Utilization of the simulated work, in (0, 1]")
        ->check(positive_number(1.0, ""))
        ->capture_default_str();
    cmd->add_option("--format", opts->format, "Report format: human (the original's text) or json")
        ->capture_default_str();
    cmd->add_option("--output,-o", opts->output,
                    "Write the report to FILE, or with - to standard output; default: standard output, or standard "
                    "error when profiling a command (the command's output keeps standard output)");
    cmd->add_option("--plot", opts->plot, "Write an SVG plot of energy mean ± std per swept value to this file");
    cmd->add_flag("--quiet,-q", opts->quiet, "No progress on standard error");
    cmd->add_option("--window-edges", opts->window_edges,
                    "Where each window edge takes a GPU's energy from: sampled (a watcher thread's latest "
                    "reading, no driver call at the edge) or synchronous (a driver call per GPU at each edge, as "
                    "the original Zeus)")
        ->check(one_of({"sampled", "synchronous"}))
        ->capture_default_str();
    // The command: everything after -- (see `zeus run`).
    cmd->add_option("command", opts->command, "The command to profile and its arguments, after --")
        ->type_name("CMD ARGS")
        ->check(CLI::Validator([](std::string&) { return std::string("taken as the command"); }, "", ""));
    cmd->validate_positionals();
    cmd->prefix_command();
    return [opts, cmd]() {
        ProfileOptions run = *opts;
        run.command.clear();
        std::vector<std::string> rest = cmd->remaining();
        if (!rest.empty() && rest.front() == "--") {
            rest.erase(rest.begin());
        } else if (!rest.empty() && rest.front().size() > 1 && rest.front().front() == '-') {
            std::cerr << "zeus: profile: unknown option " << rest.front()
                      << " (zeus profile --help lists the options; put the command after --)\n";
            return 2;
        }
        run.command = std::move(rest);
        return run_profile(run);
    };
}

}  // namespace zeus::cli
