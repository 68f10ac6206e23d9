// `zeus power`: the power of every selected GPU (and CPU package) each
// period until Ctrl-C (or --duration), then the total time and energy per
// device. GPU power comes from a PowerMonitor; CPU power is the package
// energy difference over the period.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <iostream>
#include <memory>

#include "child_process.hpp"
#include "commands.hpp"
#include "measure_session.hpp"

namespace zeus::cli {
namespace {

int run_power(const MeasureOptions& opts) {
    auto opened = MeasureSession::open(opts, true);
    if (!opened) {
        std::cerr << "zeus: " << opened.error().describe() << "\n";
        return setup_exit_code(opened.error());
    }
    MeasureSession& session = **opened;
    auto signals = SignalPipe::install({SIGINT, SIGTERM});
    if (!signals) {
        std::cerr << "zeus: " << signals.error().describe() << "\n";
        return 1;
    }
    const bool tracing = !session.trace_path().empty();
    if (auto ok = session.start_power_monitor(tracing); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return setup_exit_code(ok.error());
    }
    PowerMonitor* pm = session.power_monitor();
    const auto devices = session.power_devices();
    const auto gpu_count = session.gpu_indices().size();
    CpuPowerSampler cpu_sampler(session.cpus(), session.cpu_indices());

    std::ostream& out = session.out();
    out << render_power_header(devices, session.format());
    out.flush();

    const auto start = MonitorClock::now();
    std::optional<TraceRecorder> trace;
    if (tracing) trace.emplace("zeus power", start);
    if (auto ok = session.monitor().begin_window("zeus.power", false); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return 1;
    }
    auto last_cpu = MonitorClock::now();
    cpu_sampler.sample(last_cpu);
    const auto period =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(opts.interval_s));
    const Timestamp stop_at = opts.duration_s ? start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                            std::chrono::duration<double>(*opts.duration_s))
                                              : Timestamp::max();
    auto next = start + period;
    bool stop = false;
    while (!stop) {
        auto now = MonitorClock::now();
        auto wake = next;
        if (stop_at < wake) wake = stop_at;
        for (const auto& s : (*signals)->wait(wake > now ? wake - now : std::chrono::nanoseconds(0))) {
            if (s.signal == SIGINT || s.signal == SIGTERM) stop = true;
        }
        now = MonitorClock::now();
        if (now >= stop_at) stop = true;
        if (stop || now < next) continue;

        PowerRow row{std::chrono::system_clock::now(), std::chrono::duration<double>(now - start).count(), {}};
        std::optional<std::map<unsigned, Watts>> gpu_power;
        if (pm != nullptr) {
            if (auto p = pm->power(std::nullopt, session.power_domain())) gpu_power = *p;
        }
        for (unsigned i : session.gpu_indices()) {
            std::optional<double> w;
            if (gpu_power) {
                if (auto it = gpu_power->find(i); it != gpu_power->end()) w = it->second.count();
            }
            row.watts.push_back(w);
        }
        const auto cpu_watts = cpu_sampler.sample(now);
        for (std::size_t k = 0; k < cpu_watts.size(); ++k) {
            row.watts.push_back(cpu_watts[k]);
            if (trace && cpu_watts[k]) trace->add_interval_power(devices[gpu_count + k], last_cpu, *cpu_watts[k]);
        }
        last_cpu = now;
        out << render_power_row(devices, row, session.format());
        out.flush();
        next += period;
        if (next <= now) next = now + period;  // fell behind (suspended?): skip, do not burst
    }

    const auto end = MonitorClock::now();  // the window's edge (end_window may then wait for the counters)
    auto measurement = session.monitor().end_window("zeus.power", false);
    if (pm != nullptr) pm->stop();
    if (!measurement) {
        std::cerr << "zeus: " << measurement.error().describe() << "\n";
        return 1;
    }
    const EnergyReport report = session.report(*measurement, "power");
    switch (session.format()) {
        case OutputFormat::Human: out << "\n" << render_report(report, OutputFormat::Human); break;
        case OutputFormat::Json: out << render_report(report, OutputFormat::Json, true); break;
        // The CSV stream holds readings only; the totals go to standard error.
        case OutputFormat::Csv: std::cerr << render_report(report, OutputFormat::Human); break;
    }
    out.flush();

    if (trace) {
        finish_trace(*trace, session, cpu_sampler, last_cpu, end);
        trace->add_window("zeus power", start, end, report);
        trace->writer().set_other_data("start_time", iso_utc(report.start_time));
        trace->writer().set_other_data("power_domain", opts.power_domain);
        trace->writer().set_other_data("simulated", report.simulated);
        if (auto ok = trace->writer().write_file(session.trace_path()); !ok) {
            std::cerr << "zeus: " << ok.error().describe() << "\n";
            return 1;
        }
    }
    return 0;
}

}  // namespace

Command add_power(CLI::App& parent) {
    auto* cmd = parent.add_subcommand(
        "power", "Print the power of each GPU (and CPU package) every period; Ctrl-C prints time and energy");
    auto opts = std::make_shared<MeasureOptions>();
    add_measure_options(
        *cmd, *opts,
        MeasureFlags{"Seconds between printed readings (GPU power is sampled as often as it changes)", true, true, true});
    return [opts]() { return run_power(*opts); };
}

}  // namespace zeus::cli
