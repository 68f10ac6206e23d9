// The measurement report and the measurement loop of the CLI, for
// zeus_native: Measurement.to_json()/to_csv()/to_table() write the same bytes
// as `zeus energy --format json|csv|human` for the same data, and
// `python -m zeus_native.monitor power|energy` runs the library's loop
// (zeus/monitor/sampling_loop.hpp), stopped by Ctrl-C (KeyboardInterrupt).
#include <Python.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "bindings.hpp"
#include "devices.hpp"
#include "monitors.hpp"
#include "zeus/monitor/power_readings.hpp"
#include "zeus/monitor/sampling_loop.hpp"
#include "zeus/report/measurement_report.hpp"

namespace zeus::python {
namespace {

report::OutputFormat output_format(const std::string& text) {
    return unwrap(report::parse_output_format("format", text), ErrorFamily::Value);
}

// The report of `m` with the names of this process's devices (the sets every
// ZeusMonitor measures: zeus_native.device._sets).
std::string render_measurement(const Measurement& m, const std::string& format, const std::string& command,
                               bool one_line) {
    const auto out_format = output_format(format);
    nb::module_ sets = nb::module_::import_("zeus_native.device._sets");
    const Gpus& gpus = nb::cast<GpuSet&>(sets.attr("gpus")()).gpus;
    const Cpus& cpus = nb::cast<CpuSet&>(sets.attr("cpus")()).cpus;
    const Soc* soc = nb::cast<SocSet&>(sets.attr("soc")()).soc.get();
    return report::render_report(report::measurement_report(m, command, gpus, &cpus, soc), out_format, one_line);
}

WallTime from_unix(double seconds) {
    return WallTime(std::chrono::round<WallClock::duration>(std::chrono::duration<double>(seconds)));
}

PowerDomain power_domain_named(const std::string& name) {
    for (auto domain : {PowerDomain::DeviceInstant, PowerDomain::DeviceAverage, PowerDomain::MemoryAverage}) {
        if (to_string(domain) == name) return domain;
    }
    raise_error(Error{ErrorCode::InvalidArgument, "unknown power domain '" + name + "'",
                      "use device_instant, device_average or memory_average"},
                ErrorFamily::Value);
}

// Runs one window named `key` on `monitor` until Ctrl-C or `duration_s`,
// calling on_begun() once the window is open and on_reading(wall_unix_s,
// elapsed_s, watts per device) every `period_s` (None: no readings). Returns
// the window's Measurement.
Measurement measure_until_stopped(nb::object monitor_object, const std::string& key, std::optional<double> period_s,
                                  std::optional<double> duration_s, const std::string& power_domain,
                                  nb::object on_reading, nb::object on_begun, nb::object on_warning) {
    EnergyWindows& windows = nb::cast<EnergyWindows&>(monitor_object);
    EnergyMonitor& monitor = *windows.monitor;
    const Cpus no_cpus;
    const Cpus& cpus = windows.cpus_owner.is_none() ? no_cpus : nb::cast<CpuSet&>(windows.cpus_owner).cpus;
    const PowerDomain domain = power_domain_named(power_domain);

    SamplingLoopOptions loop;
    std::unique_ptr<PowerMonitor> power_monitor;
    if (period_s) {
        if (!(*period_s > 0)) {
            raise_error(Error{ErrorCode::InvalidArgument, "the update period must be positive",
                              "pass --update-period in seconds, e.g. 1.0"},
                        ErrorFamily::Value);
        }
        loop.period = seconds_to_duration(*period_s);
        if (!monitor.gpu_indices().empty()) {
            PowerMonitorOptions options;
            options.gpu_indices = monitor.gpu_indices();
            options.domains = {domain};
            options.max_samples_per_gpu = 1024;
            auto started = [&] {
                ReleasedGil release;
                return PowerMonitor::start(windows.gpus(), std::move(options));
            }();
            power_monitor = unwrap(std::move(started), ErrorFamily::Value);
        }
    }
    if (duration_s) loop.duration = seconds_to_duration(*duration_s);
    PowerReadings readings(power_monitor.get(), monitor.gpu_indices(), domain, cpus, monitor.cpu_indices());

    // A Python exception from a callback or a signal handler stops the loop;
    // KeyboardInterrupt is the stop request itself, anything else is raised
    // once the window is closed.
    std::optional<nb::python_error> raised;
    const auto wait_for_stop = [&](std::chrono::nanoseconds timeout) {
        // Short sleeps: Python runs its signal handlers only when asked.
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(timeout, std::chrono::milliseconds(50)));
        AcquiredGil acquire;
        if (!raised && PyErr_CheckSignals() != 0) raised.emplace();
        return raised.has_value();
    };
    const auto call = [&](const nb::object& callback, auto&&... args) {
        if (raised || callback.is_none()) return;
        try {
            callback(std::forward<decltype(args)>(args)...);
        } catch (nb::python_error& e) {
            raised.emplace(std::move(e));
        }
    };
    Timestamp start{};
    const auto begun = [&](Timestamp window_start) {
        start = window_start;
        readings.start(MonitorClock::now());
        AcquiredGil acquire;
        call(on_begun);
    };
    const auto on_tick = [&](Timestamp now) {
        const double wall = unix_seconds(WallClock::now());
        const auto watts = readings.read(now);
        const auto warnings = readings.take_warnings();
        AcquiredGil acquire;
        for (const auto& warning : warnings) call(on_warning, warning);
        call(on_reading, wall, std::chrono::duration<double>(now - start).count(), watts);
    };
    WindowRun run = [&] {
        ReleasedGil release;
        auto result = measure_window(monitor, key, loop, wait_for_stop, begun, on_tick);
        if (power_monitor) power_monitor->stop();
        return result;
    }();
    if (raised && !raised->matches(PyExc_KeyboardInterrupt)) throw std::move(*raised);
    return unwrap(std::move(run.measurement), ErrorFamily::Value);
}

}  // namespace

void bind_reports(nb::module_& m) {
    nb::object measurement = nb::borrow(nb::type<Measurement>());
    const auto method = [&](const char* name, auto&& fn, const char* doc, auto... args) {
        measurement.attr(name) =
            nb::cpp_function(std::forward<decltype(fn)>(fn), nb::is_method(), nb::scope(measurement), nb::name(name),
                             args..., doc);
    };
    method(
        "to_json",
        [](const Measurement& x, const std::string& command, bool one_line) {
            return render_measurement(x, "json", command, one_line);
        },
        "The report as JSON, the bytes `zeus energy --format json` writes for the same window (`command` names the "
        "command in it; one_line: one JSON Lines record with \"type\": \"summary\", as `zeus power` ends).",
        nb::arg("command") = "energy", nb::arg("one_line") = false);
    method(
        "to_csv", [](const Measurement& x) { return render_measurement(x, "csv", "energy", false); },
        "The report as CSV (a header and one row per device), the bytes `zeus energy --format csv` writes.");
    method(
        "to_table",
        [](const Measurement& x, const std::string& command) { return render_measurement(x, "human", command, false); },
        "The report as the table `zeus energy` prints (time, energy and average power per device, warnings).",
        nb::arg("command") = "energy");

    m.def(
        "power_device_labels",
        [](nb::object monitor_object) {
            const EnergyMonitor& monitor = *nb::cast<EnergyWindows&>(monitor_object).monitor;
            std::vector<std::string> labels;
            for (unsigned i : monitor.gpu_indices()) labels.push_back(report::gpu_label(i));
            for (unsigned i : monitor.cpu_indices()) labels.push_back(report::cpu_label(i));
            return labels;
        },
        nb::arg("monitor"), "The power readings' device labels of `monitor`: \"GPU 0\", ..., then \"CPU 0\", ....");
    m.def(
        "render_power_header",
        [](const std::vector<std::string>& devices, const std::string& format) {
            return report::render_power_header(devices, output_format(format));
        },
        nb::arg("devices"), nb::arg("format"), "The CSV header of `zeus power` (empty for human and json).");
    m.def(
        "render_power_row",
        [](const std::vector<std::string>& devices, double wall, double elapsed_s,
           std::vector<std::optional<double>> watts, const std::string& format) {
            return report::render_power_row(devices, {from_unix(wall), elapsed_s, std::move(watts)},
                                            output_format(format));
        },
        nb::arg("devices"), nb::arg("wall"), nb::arg("elapsed_s"), nb::arg("watts"), nb::arg("format"),
        "One reading as `zeus power` prints it (wall: Unix seconds; watts: per device, None when unreadable).");
    m.def("measure_until_stopped", &measure_until_stopped, nb::arg("monitor"), nb::arg("key"),
          nb::arg("period_s").none(), nb::arg("duration_s").none(), nb::arg("power_domain") = "device_instant",
          nb::arg("on_reading").none() = nb::none(), nb::arg("on_begun").none() = nb::none(),
          nb::arg("on_warning").none() = nb::none(),
          "One window over the monitored devices until Ctrl-C (KeyboardInterrupt) or duration_s, calling on_begun() "
          "once it is open, on_warning(text) for each change `zeus power` warns of (a GPU whose readings stopped or "
          "came back) and on_reading(wall_unix_s, elapsed_s, watts) every period_s; returns its Measurement "
          "(the loop of `zeus power|energy`).");
}

}  // namespace zeus::python
