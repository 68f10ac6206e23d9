// `zeus power`: the power of every selected GPU (and CPU package) each
// period until Ctrl-C (or --duration), then the total time and energy per
// device. The loop, the readings and the formats are the library's
// (zeus/monitor/sampling_loop.hpp, power_readings.hpp,
// zeus/report/measurement_report.hpp); this file wires them to the options,
// the signals and the trace.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <iostream>
#include <memory>
#include <optional>

#include "child_process.hpp"
#include "commands.hpp"
#include "measure_session.hpp"
#include "zeus/monitor/sampling_loop.hpp"

namespace zeus::cli {
namespace {

// The totals after the readings: on the output, or on standard error where
// the output is a CSV stream of readings only.
void print_totals(MeasureSession& session, const EnergyReport& report) {
    switch (session.format()) {
        case OutputFormat::Human:
            session.out() << "\n" << render_report(report, OutputFormat::Human);
            break;
        case OutputFormat::Json:
            session.out() << render_report(report, OutputFormat::Json, true);
            break;
        case OutputFormat::Csv:
            std::cerr << render_report(report, OutputFormat::Human);
            break;
    }
}

bool write_trace(TraceRecorder& trace, const MeasureSession& session, PowerReadings& readings, const WindowRun& run,
                 const EnergyReport& report, const std::string& power_domain) {
    finish_trace(trace, session, readings.cpu_sampler(), readings.last_read(), run.end);
    trace.add_window("zeus power", run.start, run.end, report);
    trace.writer().set_other_data("start_time", iso_utc(report.start_time));
    trace.writer().set_other_data("power_domain", power_domain);
    trace.writer().set_other_data("simulated", report.simulated);
    if (auto ok = trace.writer().write_file(session.trace_path()); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return false;
    }
    return true;
}

int run_power(const MeasureOptions& opts) {
    // Before the devices start their threads, so that only this thread takes the signals.
    route_signals_to_this_thread(terminating_signals());
    auto opened = MeasureSession::open(opts, true);
    if (!opened) {
        std::cerr << "zeus: " << opened.error().describe() << "\n";
        return setup_exit_code(opened.error());
    }
    MeasureSession& session = **opened;
    auto signals = SignalPipe::install(terminating_signals());
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
    PowerReadings readings(pm, session.gpu_indices(), session.power_domain(), session.cpus(), session.cpu_indices());

    std::ostream& out = session.out();
    out << render_power_header(devices, session.format());
    std::optional<Error> output_failed;
    if (auto written = session.flush_output(); !written) output_failed = written.error();

    std::optional<TraceRecorder> trace;
    Timestamp start{};
    const auto on_begun = [&](Timestamp window_start) {
        start = window_start;
        if (tracing) trace.emplace("zeus power", start);
        readings.start(MonitorClock::now());
    };
    const auto on_tick = [&](Timestamp now) {
        const auto last_cpu = readings.last_read();
        PowerRow row{WallClock::now(), std::chrono::duration<double>(now - start).count(), readings.read(now)};
        for (const auto& warning : readings.take_warnings()) std::cerr << "zeus: warning: " << warning << "\n";
        for (std::size_t k = gpu_count; k < row.watts.size(); ++k) {
            if (trace && row.watts[k]) trace->add_interval_power(devices[k], last_cpu, *row.watts[k]);
        }
        out << render_power_row(devices, row, session.format());
        if (!output_failed) {
            if (auto written = session.flush_output(); !written) output_failed = written.error();
        }
    };
    // Readings nobody can see are not worth taking: stop at the first lost row.
    const auto wait_for_stop = [&](std::chrono::nanoseconds t) {
        return output_failed.has_value() || (*signals)->wait_for_termination(t);
    };
    SamplingLoopOptions loop{seconds_to_duration(opts.interval_s), std::nullopt};
    if (opts.duration_s) loop.duration = seconds_to_duration(*opts.duration_s);
    auto run = measure_window(session.monitor(), "zeus.power", loop, wait_for_stop, on_begun, on_tick);
    if (pm != nullptr) pm->stop();
    if (!run.measurement) {
        std::cerr << "zeus: " << run.measurement.error().describe() << "\n";
        return 1;
    }
    const EnergyReport report = session.report(*run.measurement, "power");
    print_totals(session, report);
    if (auto written = session.flush_output(); !written && !output_failed) output_failed = written.error();
    if (output_failed) {
        std::cerr << "zeus: power: " << output_failed->describe() << "\n";
        return 1;
    }
    if (trace && !write_trace(*trace, session, readings, run, report, opts.power_domain)) return 1;
    return 0;
}

}  // namespace

Command add_power(CLI::App& parent) {
    auto* cmd = parent.add_subcommand(
        "power", "Print the power of each GPU (and CPU package) every period; Ctrl-C prints time and energy");
    auto opts = std::make_shared<MeasureOptions>();
    add_measure_options(
        *cmd, *opts,
        MeasureFlags{"Seconds between printed readings (GPU power is sampled as often as it changes)", true, true, true,
                     false});
    return [opts]() { return run_power(*opts); };
}

}  // namespace zeus::cli
