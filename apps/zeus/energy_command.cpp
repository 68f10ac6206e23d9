// `zeus energy`: one energy window from start until Ctrl-C (or --duration).
#include <CLI/CLI.hpp>
#include <signal.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "child_process.hpp"
#include "commands.hpp"
#include "measure_session.hpp"

namespace zeus::cli {
namespace {

int run_energy(const MeasureOptions& opts) {
    auto opened = MeasureSession::open(opts, false);
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
    const auto start = MonitorClock::now();  // the window's edge: --duration counts from here
    if (auto ok = session.monitor().begin_window("zeus.energy", false); !ok) {
        std::cerr << "zeus: " << ok.error().describe() << "\n";
        return 1;
    }
    if (session.format() == OutputFormat::Human && !opts.duration_s) {
        std::cerr << "zeus: measuring; press Ctrl-C to stop\n";
    }
    const Timestamp stop_at = opts.duration_s ? start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                            std::chrono::duration<double>(*opts.duration_s))
                                              : Timestamp::max();
    bool stop = false;
    while (!stop) {
        const auto now = MonitorClock::now();
        if (now >= stop_at) break;
        const auto timeout = std::min<std::chrono::nanoseconds>(stop_at - now, std::chrono::hours(1));
        for (const auto& s : (*signals)->wait(timeout)) {
            if (s.signal == SIGINT || s.signal == SIGTERM) stop = true;
        }
    }
    auto measurement = session.monitor().end_window("zeus.energy", false);
    if (!measurement) {
        std::cerr << "zeus: " << measurement.error().describe() << "\n";
        return 1;
    }
    std::ostream& out = session.out();
    if (session.format() == OutputFormat::Human && !opts.duration_s && opts.output.empty()) out << "\n";
    out << render_report(session.report(*measurement, "energy"), session.format());
    out.flush();
    return 0;
}

}  // namespace

Command add_energy(CLI::App& parent) {
    auto* cmd = parent.add_subcommand("energy", "Measure time and energy per device from now until Ctrl-C");
    auto opts = std::make_shared<MeasureOptions>();
    add_measure_options(*cmd, *opts, MeasureFlags{nullptr, false, true, false});
    return [opts]() { return run_energy(*opts); };
}

}  // namespace zeus::cli
