// `zeus run [options] -- CMD ARGS...`: runs the command, measures its time
// and energy per device, and exits with the command's exit code.
//
// Signals: the command shares zeus's process group, so Ctrl-C in a terminal
// reaches both; zeus then only waits for the command to finish. Every other
// terminating signal (SIGTERM, SIGHUP, SIGUSR1, ... sent to zeus alone, or a
// terminal's signal when the command left zeus's process group) is forwarded
// to the command. Either way the partial measurement is printed once the
// command has ended; zeus never exits before it.
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

// Simulated GPUs: the command must run on the ones measured here.
Result<std::optional<simulation::SimulatorSharedWithChildren>> share_simulator(const MeasureOptions& measure) {
    using Shared = std::optional<simulation::SimulatorSharedWithChildren>;
    auto env = GpuOptions::from_environment();
    if (!env || !(measure.device.simulate || env->simulate)) return Shared{};
    auto shared = simulation::SimulatorSharedWithChildren::arrange(env->simulator_library);
    if (!shared) return shared.error();
    return Shared{std::move(shared).value()};
}

// How the command ended: its status (none when it could not be waited for)
// and the first stop request (a terminating signal) that zeus received while
// it ran.
struct CommandEnd {
    std::optional<ChildStatus> status;
    std::optional<int> interrupted_by;
};

// Records a stop request and forwards it to the command unless it got it
// already (a terminal's signal to a command in zeus's process group).
void stop_command(pid_t pid, const ReceivedSignal& received, CommandEnd& ended) {
    if (!is_stop_request(received)) return;
    if (!ended.interrupted_by) ended.interrupted_by = received.signal;
    if (!ended.status && !reached_command_too(received, pid)) ::kill(pid, received.signal);
}

// Waits for the command, forwarding the signals sent to zeus alone, and
// calls `sample` (when set: for a trace) every `period` from `start` on.
CommandEnd wait_for_command(pid_t pid, SignalPipe& signals, Timestamp start, std::chrono::nanoseconds period,
                            const std::function<void(Timestamp)>& sample) {
    const bool tracing = static_cast<bool>(sample);
    auto next = start + period;
    CommandEnd ended;
    while (!ended.status) {
        const auto now = MonitorClock::now();
        // Without a trace nothing is sampled: the loop only wakes for signals.
        const auto timeout = tracing ? (next > now ? next - now : std::chrono::nanoseconds(0))
                                     : std::chrono::nanoseconds(std::chrono::seconds(1));
        for (const auto& s : signals.wait(timeout)) stop_command(pid, s, ended);
        int raw = 0;
        const pid_t waited = ::waitpid(pid, &raw, WNOHANG);
        if (waited == pid) {
            ended.status = ChildStatus::from_wait_status(raw);
            // Signals that came before the command was reaped: their handlers ran on this
            // thread before waitpid returned (route_signals_to_this_thread), so they are
            // in the pipe now. A Ctrl-C that ended the command is among them.
            for (const auto& s : signals.wait(std::chrono::nanoseconds(0))) stop_command(pid, s, ended);
            break;
        }
        if (waited < 0 && errno != EINTR) {
            std::cerr << "zeus: cannot wait for the command: " << std::strerror(errno) << "\n";
            break;
        }
        const auto after = MonitorClock::now();
        if (tracing && after >= next) {
            sample(after);
            next += period;
            if (next <= after) next = after + period;
        }
    }
    return ended;
}

// The --trace of a run: CPU power sampled while the command runs, then each
// GPU's power timeline and the measured window.
class RunTrace {
  public:
    // Starts the CPU tracks now, after begin_window (which may have waited).
    RunTrace(MeasureSession& session, CpuPowerSampler& cpu_sampler, const std::vector<std::string>& command,
             Timestamp start)
        : recorder_("zeus run: " + command_line(command), start),
          session_(session),
          cpu_sampler_(cpu_sampler),
          devices_(session.power_devices()),
          gpu_count_(session.gpu_indices().size()),
          last_cpu_(MonitorClock::now()) {
        cpu_sampler_.sample(last_cpu_);
    }

    void sample_cpus(Timestamp now) {
        const auto cpu_watts = cpu_sampler_.sample(now);
        for (std::size_t k = 0; k < cpu_watts.size(); ++k) {
            if (cpu_watts[k]) recorder_.add_interval_power(devices_[gpu_count_ + k], last_cpu_, *cpu_watts[k]);
        }
        last_cpu_ = now;
    }

    Status write(const std::vector<std::string>& command, const EnergyReport& report, Timestamp start, Timestamp end) {
        finish_trace(recorder_, session_, cpu_sampler_, last_cpu_, end);
        recorder_.add_window(command_line(command), start, end, report);
        recorder_.writer().set_other_data("start_time", iso_utc(report.start_time));
        recorder_.writer().set_other_data("command", command);
        recorder_.writer().set_other_data("simulated", report.simulated);
        return recorder_.writer().write_file(session_.trace_path());
    }

  private:
    TraceRecorder recorder_;
    MeasureSession& session_;
    CpuPowerSampler& cpu_sampler_;
    const std::vector<std::string> devices_;
    const std::size_t gpu_count_;
    Timestamp last_cpu_;
};

// Prints the report of the ended window, pushes it and writes the trace. The
// exit code is the command's, or kZeusFailed where zeus failed after a
// command that succeeded.
int report_run(MeasureSession& session, const RunOptions& opts, metrics::Pushgateway* gateway,
               const Measurement& measurement, const CommandEnd& ended, RunTrace* trace, Timestamp start,
               Timestamp end) {
    const int command_exit = ended.status ? ended.status->shell_exit_code() : kZeusFailed;
    EnergyReport report = session.charged_report(measurement, "run");
    report.command = opts.command;
    report.child = ended.status;
    report.interrupted_by = ended.interrupted_by;
    std::ostream& out = session.out();
    out << render_report(report, session.format());
    if (auto written = session.flush_output(); !written) {
        std::cerr << "zeus: run: the command ran, but " << written.error().describe() << "\n";
        return command_exit != 0 ? command_exit : kZeusFailed;
    }
    if (gateway != nullptr) push_run_energy(*gateway, measurement, opts.command);

    if (trace != nullptr) {
        if (auto ok = trace->write(opts.command, report, start, end); !ok) {
            std::cerr << "zeus: " << ok.error().describe() << "\n";
            return command_exit != 0 ? command_exit : kZeusFailed;
        }
    }
    return command_exit;
}

// Measures one window around the command's run; `signals` was installed
// before it starts, so its SIGCHLD cannot be missed.
int measure_command(const RunOptions& opts, MeasureSession& session, SignalPipe& signals,
                    metrics::Pushgateway* gateway) {
    const bool tracing = !session.trace_path().empty();
    if (tracing) {
        if (auto ok = session.start_power_monitor(true); !ok) {
            std::cerr << "zeus: " << ok.error().describe() << "\n";
            return kZeusFailed;
        }
    }
    PowerMonitor* pm = session.power_monitor();
    CpuPowerSampler cpu_sampler(session.cpus(), session.cpu_indices());

    // The window's edges: taken when begin/end_window are called (each may
    // then wait for the counters to refresh), so the trace's span matches it.
    const auto start = MonitorClock::now();
    if (auto ok = session.monitor().begin_window("zeus.run", false); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return kZeusFailed;
    }
    session.begin_charges();
    std::optional<RunTrace> trace;
    if (tracing) trace.emplace(session, cpu_sampler, opts.command, start);

    // A stop request that came while the devices were opened: nothing to run any more.
    for (const auto& s : signals.wait(std::chrono::nanoseconds(0))) {
        if (!is_stop_request(s)) continue;
        (void)session.monitor().end_window("zeus.run", false, true);
        std::cerr << "zeus: run: stopped by " << signal_name(s.signal) << " before the command started\n";
        return 128 + s.signal;
    }
    std::cout.flush();
    std::cerr.flush();
    auto child = spawn_command(opts.command,
                               session.command_stdout_to_stderr() ? ChildStdout::kToStderr : ChildStdout::kInherited);
    if (!child) {
        (void)session.monitor().end_window("zeus.run", false, true);
        std::cerr << "zeus: " << child.error().describe() << "\n";
        return spawn_failure_exit_code(child.error());
    }
    std::function<void(Timestamp)> sample;
    if (trace) sample = [&trace](Timestamp now) { trace->sample_cpus(now); };
    const auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(opts.measure.interval_s));
    const CommandEnd ended = wait_for_command(*child, signals, start, period, sample);

    const auto end = MonitorClock::now();
    auto measurement = session.monitor().end_window("zeus.run", false);
    if (pm != nullptr) pm->stop();
    if (!measurement) {
        const int command_exit = ended.status ? ended.status->shell_exit_code() : kZeusFailed;
        std::cerr << "zeus: the command ran, but its energy could not be measured: "
                  << measurement.error().describe() << "\n";
        return command_exit != 0 ? command_exit : kZeusFailed;
    }
    return report_run(session, opts, gateway, *measurement, ended, trace ? &*trace : nullptr, start, end);
}

int run_command(const RunOptions& opts) {
    // Before the devices start their threads, so that only this thread takes the signals.
    route_signals_to_this_thread(terminating_signals());
    if (opts.command.empty()) {
        std::cerr << "zeus: run needs a command (zeus run [options] -- CMD ARGS...)\n";
        return kZeusFailed;
    }
    if (auto usable = check_command_name(opts.command); !usable) {
        std::cerr << "zeus: run: " << usable.error().describe() << "\n";
        return kZeusFailed;
    }
    auto gateway = open_run_push(opts.push);
    if (!gateway) {
        std::cerr << "zeus: " << gateway.error().describe() << "\n";
        return kZeusFailed;
    }
    auto simulator = share_simulator(opts.measure);
    if (!simulator) {
        std::cerr << "zeus: " << simulator.error().describe() << "\n";
        return kZeusFailed;
    }
    auto opened = MeasureSession::open(opts.measure, true);
    if (!opened) {
        std::cerr << "zeus: " << opened.error().describe() << "\n";
        return kZeusFailed;
    }
    std::vector<int> handled = terminating_signals();
    handled.push_back(SIGCHLD);
    auto signals = SignalPipe::install(handled);
    if (!signals) {
        std::cerr << "zeus: " << signals.error().describe() << "\n";
        return kZeusFailed;
    }
    return measure_command(opts, **opened, **signals, gateway->get());
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
