// `zeus run [options] -- CMD ARGS...`: runs the command, measures its time
// and energy per device, and exits with the command's exit code.
//
// Signals: the command shares zeus's process group, so Ctrl-C in a terminal
// reaches both; zeus then only waits for the command to finish. A SIGINT or
// SIGTERM sent to zeus alone (kill) is forwarded to the command. Either way
// the partial measurement is printed once the command has ended.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "child_process.hpp"
#include "commands.hpp"
#include "measure_session.hpp"
#include "run_push.hpp"
#include "zeus/simulation/scratch_directory.hpp"

namespace zeus::cli {
namespace {

// zeus's own failures, told apart from the command's exit codes as env(1) and timeout(1) do.
constexpr int kZeusFailed = 125;

struct RunOptions {
    MeasureOptions measure;
    RunPushOptions push;
    std::vector<std::string> command;
};

std::string command_line(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& a : argv) {
        if (!line.empty()) line += ' ';
        line += a;
    }
    return line;
}

int run_command(const RunOptions& opts) {
    if (opts.command.empty()) {
        std::cerr << "zeus: run needs a command (zeus run [options] -- CMD ARGS...)\n";
        return kZeusFailed;
    }
    auto gateway = open_run_push(opts.push);
    if (!gateway) {
        std::cerr << "zeus: " << gateway.error().describe() << "\n";
        return kZeusFailed;
    }
    // Simulated GPUs: the command must run on the ones measured here.
    std::optional<simulation::SimulatorSharedWithChildren> simulator;
    if (auto env = GpuOptions::from_environment(); env && (opts.measure.device.simulate || env->simulate)) {
        auto shared = simulation::SimulatorSharedWithChildren::arrange(env->simulator_library);
        if (!shared) {
            std::cerr << "zeus: " << shared.error().describe() << "\n";
            return kZeusFailed;
        }
        simulator.emplace(std::move(shared).value());
    }
    auto opened = MeasureSession::open(opts.measure, true);
    if (!opened) {
        std::cerr << "zeus: " << opened.error().describe() << "\n";
        return kZeusFailed;
    }
    MeasureSession& session = **opened;
    // Installed before the command starts, so its SIGCHLD cannot be missed.
    auto signals = SignalPipe::install({SIGINT, SIGTERM, SIGCHLD});
    if (!signals) {
        std::cerr << "zeus: " << signals.error().describe() << "\n";
        return kZeusFailed;
    }
    const bool tracing = !session.trace_path().empty();
    if (tracing) {
        if (auto ok = session.start_power_monitor(true); !ok) {
            std::cerr << "zeus: " << ok.error().describe() << "\n";
            return kZeusFailed;
        }
    }
    PowerMonitor* pm = session.power_monitor();
    const auto devices = session.power_devices();
    const auto gpu_count = session.gpu_indices().size();
    CpuPowerSampler cpu_sampler(session.cpus(), session.cpu_indices());

    // The window's edges: taken when begin/end_window are called (each may
    // then wait for the counters to refresh), so the trace's span matches it.
    const auto start = MonitorClock::now();
    if (auto ok = session.monitor().begin_window("zeus.run", false); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return kZeusFailed;
    }
    session.begin_charges();
    std::optional<TraceRecorder> trace;
    if (tracing) trace.emplace("zeus run: " + command_line(opts.command), start);
    auto last_cpu = MonitorClock::now();  // CPU power from here: begin_window may have waited
    if (tracing) cpu_sampler.sample(last_cpu);

    std::cout.flush();
    std::cerr.flush();
    auto child = spawn_command(opts.command,
                               session.command_stdout_to_stderr() ? ChildStdout::kToStderr : ChildStdout::kInherited);
    if (!child) {
        (void)session.monitor().end_window("zeus.run", false, true);
        std::cerr << "zeus: " << child.error().describe() << "\n";
        return spawn_failure_exit_code(child.error());
    }
    const pid_t pid = *child;

    const auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(opts.measure.interval_s));
    auto next = start + period;
    std::optional<int> interrupted_by;
    std::optional<ChildStatus> status;
    while (!status) {
        const auto now = MonitorClock::now();
        // Without a trace nothing is sampled: the loop only wakes for signals.
        const auto timeout = tracing ? (next > now ? next - now : std::chrono::nanoseconds(0))
                                     : std::chrono::nanoseconds(std::chrono::seconds(1));
        for (const auto& s : (*signals)->wait(timeout)) {
            if (s.signal != SIGINT && s.signal != SIGTERM) continue;
            if (!interrupted_by) interrupted_by = s.signal;
            // A terminal's Ctrl-C already reached the command (same process group).
            if (s.from_process) ::kill(pid, s.signal);
        }
        int raw = 0;
        const pid_t waited = ::waitpid(pid, &raw, WNOHANG);
        if (waited == pid) {
            status = ChildStatus::from_wait_status(raw);
            break;
        }
        if (waited < 0 && errno != EINTR) {
            std::cerr << "zeus: cannot wait for the command: " << std::strerror(errno) << "\n";
            break;
        }
        const auto after = MonitorClock::now();
        if (tracing && after >= next) {
            const auto cpu_watts = cpu_sampler.sample(after);
            for (std::size_t k = 0; k < cpu_watts.size(); ++k) {
                if (cpu_watts[k]) trace->add_interval_power(devices[gpu_count + k], last_cpu, *cpu_watts[k]);
            }
            last_cpu = after;
            next += period;
            if (next <= after) next = after + period;
        }
    }

    const auto end = MonitorClock::now();
    auto measurement = session.monitor().end_window("zeus.run", false);
    if (pm != nullptr) pm->stop();
    const int command_exit = status ? status->shell_exit_code() : kZeusFailed;
    if (!measurement) {
        std::cerr << "zeus: the command ran, but its energy could not be measured: "
                  << measurement.error().describe() << "\n";
        return command_exit != 0 ? command_exit : kZeusFailed;
    }
    EnergyReport report = session.charged_report(*measurement, "run");
    report.command = opts.command;
    report.child = status;
    report.interrupted_by = interrupted_by;
    std::ostream& out = session.out();
    out << render_report(report, session.format());
    if (auto written = session.flush_output(); !written) {
        std::cerr << "zeus: run: the command ran, but " << written.error().describe() << "\n";
        return command_exit != 0 ? command_exit : kZeusFailed;
    }
    if (*gateway) push_run_energy(**gateway, *measurement, opts.command);

    if (trace) {
        finish_trace(*trace, session, cpu_sampler, last_cpu, end);
        trace->add_window(command_line(opts.command), start, end, report);
        trace->writer().set_other_data("start_time", iso_utc(report.start_time));
        trace->writer().set_other_data("command", opts.command);
        trace->writer().set_other_data("simulated", report.simulated);
        if (auto ok = trace->writer().write_file(session.trace_path()); !ok) {
            std::cerr << "zeus: " << ok.error().describe() << "\n";
            return command_exit != 0 ? command_exit : kZeusFailed;
        }
    }
    return command_exit;
}

}  // namespace

Command add_run(CLI::App& parent) {
    auto* cmd = parent.add_subcommand(
        "run", "Run a command and report its time, energy per device and average power (zeus run [options] -- CMD ...)");
    auto opts = std::make_shared<RunOptions>();
    opts->measure.interval_s = 0.1;
    opts->measure.runs_command = true;  // before the options, for --output's help
    add_measure_options(
        *cmd, opts->measure,
        MeasureFlags{"Seconds between CPU power samples in the trace (GPU power is sampled as often as it changes)",
                     true, false, false, true});
    add_run_push_options(*cmd, opts->push);
    // The command is everything from its name (or from --) on, options
    // included: the positional is only there for the help text. It rejects
    // every value, so CLI11's prefix-command mode hands the command over
    // untouched in remaining(), with a "--" kept in front when one was given.
    cmd->add_option("command", opts->command, "The command to run and its arguments, after --")
        ->type_name("CMD ARGS")
        ->check(CLI::Validator([](std::string&) { return std::string("taken as the command"); }, "", ""));
    cmd->validate_positionals();
    cmd->prefix_command();
    return [opts, cmd]() {
        RunOptions run = *opts;
        run.command.clear();
        std::vector<std::string> rest = cmd->remaining();
        if (!rest.empty() && rest.front() == "--") {
            rest.erase(rest.begin());
        } else if (!rest.empty() && rest.front().size() > 1 && rest.front().front() == '-') {
            std::cerr << "zeus: run: unknown option " << rest.front()
                      << " (zeus run --help lists the options; put the command after --)\n";
            return kZeusFailed;
        }
        run.command = std::move(rest);
        return run_command(run);
    };
}

}  // namespace zeus::cli
