// `zeus energy`: one energy window from start until Ctrl-C (or --duration):
// the library's measure_window with the CLI's signals as the stop request.
#include <CLI/CLI.hpp>
#include <signal.h>

#include <iostream>
#include <memory>

#include "child_process.hpp"
#include "commands.hpp"
#include "measure_session.hpp"
#include "zeus/monitor/sampling_loop.hpp"

namespace zeus::cli {
namespace {

int run_energy(const MeasureOptions& opts) {
    // Before the devices start their threads, so that only this thread takes the signals.
    route_signals_to_this_thread(terminating_signals());
    auto opened = MeasureSession::open(opts, false);
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
    const auto on_begun = [&](Timestamp) {
        session.begin_charges();
        if (session.format() == OutputFormat::Human && !opts.duration_s) {
            std::cerr << "zeus: measuring; press Ctrl-C to stop\n";
        }
    };
    const auto wait_for_stop = [&](std::chrono::nanoseconds t) { return (*signals)->wait_for_termination(t); };
    SamplingLoopOptions loop;
    if (opts.duration_s) loop.duration = seconds_to_duration(*opts.duration_s);
    auto measurement = measure_window(session.monitor(), "zeus.energy", loop, wait_for_stop, on_begun).measurement;
    if (!measurement) {
        std::cerr << "zeus: " << measurement.error().describe() << "\n";
        return 1;
    }
    std::ostream& out = session.out();
    if (session.format() == OutputFormat::Human && !opts.duration_s && opts.output.empty()) out << "\n";
    out << render_report(session.charged_report(*measurement, "energy"), session.format());
    if (auto written = session.flush_output(); !written) {
        std::cerr << "zeus: energy: " << written.error().describe() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

Command add_energy(CLI::App& parent) {
    auto* cmd = parent.add_subcommand("energy", "Measure time and energy per device from now until Ctrl-C");
    auto opts = std::make_shared<MeasureOptions>();
    add_measure_options(*cmd, *opts, MeasureFlags{nullptr, false, true, false, true});
    return [opts]() { return run_energy(*opts); };
}

}  // namespace zeus::cli
