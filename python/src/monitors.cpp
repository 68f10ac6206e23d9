// zeus_native.monitor's native half: energy windows (ZeusMonitor), the
// Measurement they return, and the power and temperature timelines. Device
// reads run with the GIL released; timestamps cross the boundary as Unix
// seconds (time.time()), as in the original.
#include <Python.h>
#include <fmt/format.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "bindings.hpp"
#include "devices.hpp"
#include "monitors.hpp"
#include "zeus/monitor/power_monitor.hpp"
#include "zeus/monitor/temperature_monitor.hpp"

namespace zeus::python {

namespace {

double unix_seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}
using zeus::unix_seconds;  // a Measurement's WallTime

// A steady-clock instant from Unix seconds, through the current offset
// between the two clocks.
Timestamp to_steady(double unix) {
    const auto sys_now = std::chrono::system_clock::now();
    const auto steady_now = MonitorClock::now();
    return steady_now + std::chrono::duration_cast<MonitorClock::duration>(
                            std::chrono::duration<double>(unix - unix_seconds(sys_now)));
}
double to_unix(Timestamp t) {
    const auto sys_now = std::chrono::system_clock::now();
    const auto steady_now = MonitorClock::now();
    return unix_seconds(sys_now) + std::chrono::duration<double>(t - steady_now).count();
}
std::optional<Timestamp> to_steady(const std::optional<double>& unix) {
    if (!unix) return std::nullopt;
    return to_steady(*unix);
}

PowerDomain parse_domain(std::string_view name) {
    for (auto d : {PowerDomain::DeviceInstant, PowerDomain::DeviceAverage, PowerDomain::MemoryAverage}) {
        if (to_string(d) == name) return d;
    }
    raise_error(Error{ErrorCode::InvalidArgument, fmt::format("unknown power domain '{}'", name),
                      "use one of device_instant, device_average, memory_average", 0},
                ErrorFamily::Value);
}

// A value whose device stopped answering is NaN, never a silent 0.0: it
// stays a float (the original's types), and any sum that includes it shows.
double joules_or_nan(const EnergyValue& value) {
    return value.lost ? std::numeric_limits<double>::quiet_NaN() : value.energy.count();
}

template <class Map>
nb::object energy_dict(const Map& values) {
    if (values.empty()) return nb::none();
    nb::dict d;
    for (const auto& [key, value] : values) d[nb::cast(key)] = joules_or_nan(value);
    return d;
}

// Warns once per unavailable GPU, naming it and the cause (UserWarning).
// `stack_level` as warnings.warn's: 1 = the Python line that called us.
void warn_unavailable(unsigned gpu, std::string_view what, std::string_view cause, int stack_level) {
    const std::string text = fmt::format("GPU {} {}: {}", gpu, what, cause);
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), stack_level) != 0) throw nb::python_error();
}

template <class Map>
nb::dict provenance_dict(const Map& values) {
    nb::dict d;
    for (const auto& [key, value] : values) {
        nb::dict entry;
        entry["source"] = std::string(to_string(value.source)).c_str();
        entry["warnings"] = value.warnings;
        entry["lost"] = value.lost;
        entry["edge_error_bound_j"] =
            value.edge_error_bound ? nb::cast(value.edge_error_bound->count()) : nb::none();
        d[nb::cast(key)] = entry;
    }
    return d;
}

nb::dict gpu_energy(const Measurement& m) {
    nb::dict d;
    for (const auto& [gpu, value] : m.gpu_energy) d[nb::cast(gpu)] = joules_or_nan(value);
    return d;
}

EnergySource parse_source(std::string_view name) {
    for (auto s : {EnergySource::HardwareCounter, EnergySource::IntegratedPower,
                   EnergySource::InstantPowerApproximation, EnergySource::WindowLog}) {
        if (to_string(s) == name) return s;
    }
    raise_error(Error{ErrorCode::InvalidArgument, fmt::format("unknown energy source '{}' in provenance", name),
                      "use 'hardware counter', 'integrated power', 'instant power approximation' or 'window log'",
                      0},
                ErrorFamily::Value);
}

// One device's values; `provenance` (its entry of Measurement.provenance, or
// None) restores how the value was obtained, so a Measurement rebuilt from
// its fields (unpickled, copied) reports as the measured one did.
template <class Map>
void fill(Map& target, nb::handle source, EnergySource how, nb::handle provenance) {
    if (source.is_none()) return;
    for (auto [key, value] : nb::cast<nb::dict>(source)) {
        const double joules = nb::cast<double>(value);
        // NaN is how a lost device reads back (gpu_energy): keep it marked.
        EnergyValue v = std::isnan(joules) ? EnergyValue{Joules(0.0), how, {"given as NaN: the device was lost"}, true}
                                           : EnergyValue{Joules(joules), how, {}};
        if (!provenance.is_none() && nb::cast<nb::dict>(provenance).contains(key)) {
            nb::dict entry = nb::cast<nb::dict>(provenance[key]);
            if (entry.contains("source")) v.source = parse_source(nb::cast<std::string>(entry["source"]));
            if (entry.contains("warnings")) v.warnings = nb::cast<std::vector<std::string>>(entry["warnings"]);
            if (entry.contains("lost")) v.lost = v.lost || nb::cast<bool>(entry["lost"]);
            if (entry.contains("edge_error_bound_j") && !entry["edge_error_bound_j"].is_none())
                v.edge_error_bound = Joules(nb::cast<double>(entry["edge_error_bound_j"]));
        }
        target[nb::cast<typename Map::key_type>(key)] = std::move(v);
    }
}

nb::object provenance_of(nb::handle provenance, const char* kind) {
    if (provenance.is_none()) return nb::none();
    nb::dict d = nb::cast<nb::dict>(provenance);
    return d.contains(kind) ? nb::object(d[kind]) : nb::none();
}

void bind_measurement(nb::module_& m) {
    nb::class_<Measurement>(m, "Measurement",
                            "What an energy window measured (the original's Measurement), in J and s, with how "
                            "each value was obtained (provenance) and what makes it less trustworthy (warnings).")
        .def("__init__",
             [](Measurement* self, double time, nb::dict gpu, nb::object cpu, nb::object dram, nb::object soc,
                std::optional<double> start_time, nb::object provenance, std::vector<std::string> window_warnings) {
                 new (self) Measurement();
                 self->time = Seconds(time);
                 if (start_time)
                     self->start_time = WallTime(
                         std::chrono::duration_cast<WallClock::duration>(std::chrono::duration<double>(*start_time)));
                 fill(self->gpu_energy, gpu, EnergySource::HardwareCounter, provenance_of(provenance, "gpu"));
                 fill(self->cpu_energy, cpu, EnergySource::HardwareCounter, provenance_of(provenance, "cpu"));
                 fill(self->dram_energy, dram, EnergySource::HardwareCounter, provenance_of(provenance, "dram"));
                 fill(self->soc_energy, soc, EnergySource::IntegratedPower, provenance_of(provenance, "soc"));
                 self->warnings = std::move(window_warnings);
             },
             nb::arg("time"), nb::arg("gpu_energy"), nb::arg("cpu_energy") = nb::none(),
             nb::arg("dram_energy") = nb::none(), nb::arg("soc_energy") = nb::none(),
             nb::arg("start_time") = nb::none(), nb::arg("provenance") = nb::none(),
             nb::arg("window_warnings") = std::vector<std::string>{})
        .def_prop_ro("time", [](const Measurement& x) { return x.time.count(); }, "Elapsed time (s).")
        .def_prop_ro("gpu_energy", &gpu_energy,
                     "Energy per GPU index (J); NaN for a GPU lost during the window (see lost_gpus).")
        .def_prop_ro("lost_gpus", [](const Measurement& x) {
                std::vector<unsigned> lost;
                for (const auto& [gpu, v] : x.gpu_energy)
                    if (v.lost) lost.push_back(gpu);
                return lost;
            }, "GPUs that stopped answering during the window: their energy is unknown (NaN in gpu_energy), left "
               "out of total_energy, and `warnings` says why.")
        .def_prop_ro("cpu_energy", [](const Measurement& x) { return energy_dict(x.cpu_energy); },
                     "Energy per CPU package (J), or None without CPUs.")
        .def_prop_ro("dram_energy", [](const Measurement& x) { return energy_dict(x.dram_energy); },
                     "DRAM energy per CPU package (J), or None.")
        .def_prop_ro("soc_energy", [](const Measurement& x) { return energy_dict(x.soc_energy); },
                     "SoC energy per metric ('cpu', 'gpu', 'total'; J), or None without a SoC.")
        .def_prop_ro("total_energy", [](const Measurement& x) { return x.total_gpu_energy().count(); },
                     "GPU energy summed (J), as the original's total_energy; lost GPUs are left out.")
        .def_prop_ro("start_time", [](const Measurement& x) { return unix_seconds(x.start_time); },
                     "When the window began (Unix seconds).")
        .def_prop_ro("window_warnings", [](const Measurement& x) { return x.warnings; },
                     "Warnings about the window as a whole (`warnings` also lists each device's).")
        .def_prop_ro("warnings", [](const Measurement& x) {
                std::vector<std::string> all = x.warnings;
                for (const auto& [gpu, v] : x.gpu_energy)
                    for (const auto& w : v.warnings) all.push_back(fmt::format("GPU {}: {}", gpu, w));
                for (const auto& [cpu, v] : x.cpu_energy)
                    for (const auto& w : v.warnings) all.push_back(fmt::format("CPU {}: {}", cpu, w));
                for (const auto& [cpu, v] : x.dram_energy)
                    for (const auto& w : v.warnings) all.push_back(fmt::format("DRAM {}: {}", cpu, w));
                return all;
            }, "Everything that makes a value less trustworthy, one line each (empty when none).")
        .def_prop_ro("provenance", [](const Measurement& x) {
                nb::dict d;
                d["gpu"] = provenance_dict(x.gpu_energy);
                d["cpu"] = provenance_dict(x.cpu_energy);
                d["dram"] = provenance_dict(x.dram_energy);
                d["soc"] = provenance_dict(x.soc_energy);
                return d;
            }, "How each value was obtained: {'gpu': {index: {'source': ..., 'warnings': [...]}}, 'cpu': ..., "
               "'dram': ..., 'soc': ...}; each entry also says whether the device was 'lost', and "
               "'edge_error_bound_j': the most a counter value can be off by its edge estimates (None when "
               "the edges needed none); sources are 'hardware counter', 'integrated power', 'instant power "
               "approximation'.")
        .def_prop_ro("trustworthy", &Measurement::trustworthy, "True when no value carries a warning.")
        .def("__repr__", [](const Measurement& x) {
            return fmt::format("Measurement(time={}, gpu_energy={}, cpu_energy={}, dram_energy={}, soc_energy={})",
                               nb::repr(nb::float_(x.time.count())).c_str(), nb::repr(gpu_energy(x)).c_str(),
                               nb::repr(energy_dict(x.cpu_energy)).c_str(),
                               nb::repr(energy_dict(x.dram_energy)).c_str(),
                               nb::repr(energy_dict(x.soc_energy)).c_str());
        });
}

void bind_energy_monitor(nb::module_& m) {
    nb::class_<EnergyWindows>(m, "EnergyMonitor",
                              "Named energy windows over GPUs, CPU packages and the SoC (base of ZeusMonitor).")
        .def(
            "__init__",
            [](EnergyWindows* self, nb::object gpus, nb::object cpus, nb::object soc,
               std::optional<std::vector<unsigned>> gpu_indices, std::optional<std::vector<unsigned>> cpu_indices,
               bool approx, std::optional<std::string> log_file, nb::object sync, bool wait_for_counter_refresh,
               std::string_view window_edges) {
                EnergyMonitorOptions options;
                options.wait_for_counter_refresh = wait_for_counter_refresh;
                if (window_edges == "synchronous") {
                    options.edges = WindowEdges::Synchronous;
                } else if (window_edges != "sampled") {
                    throw nb::value_error(("window_edges must be \"synchronous\" or \"sampled\", not \"" +
                                           std::string(window_edges) + "\"")
                                              .c_str());
                }
                options.gpu_indices = std::move(gpu_indices);
                options.cpu_indices = std::move(cpu_indices);
                options.approx_instant_energy = approx;
                options.log_file = std::move(log_file);
                if (!sync.is_none()) {
                    // For windows the C++ core opens itself (the power-limit optimizer's):
                    // called without the GIL; the windows opened from Python sync in begin/end.
                    // A failure is kept (the first of a call) and raised by the
                    // binding that called into the core.
                    options.sync = [self, fn = sync.ptr()](const std::vector<unsigned>& indices) {
                        AcquiredGil acquire;
                        try {
                            nb::list l;
                            for (unsigned i : indices) l.append(i);
                            const nb::handle callable(fn);
                            callable(l);
                        } catch (nb::python_error& e) {
                            if (!self->sync_error) self->sync_error.emplace(std::move(e));
                        }
                    };
                }
                const Gpus& g = nb::cast<GpuSet&>(gpus).gpus;
                const Cpus* c = cpus.is_none() ? nullptr : &nb::cast<CpuSet&>(cpus).cpus;
                const Soc* s = soc.is_none() ? nullptr : nb::cast<SocSet&>(soc).soc.get();
                Result<std::unique_ptr<EnergyMonitor>> opened = [&] {
                    ReleasedGil release;
                    return EnergyMonitor::open(g, c, s, std::move(options));
                }();
                auto monitor = unwrap(std::move(opened), ErrorFamily::Gpu);
                new (self) EnergyWindows{gpus, cpus, soc, std::move(monitor), sync, approx, nb::list()};
                for (unsigned i : self->monitor->gpu_indices()) self->gpu_index_list.append(i);
            },
            nb::arg("gpus"), nb::arg("cpus").none(), nb::arg("soc").none(), nb::arg("gpu_indices").none(),
            nb::arg("cpu_indices").none(), nb::arg("approx_instant_energy"), nb::arg("log_file").none(),
            nb::arg("sync").none(), nb::arg("wait_for_counter_refresh") = false, nb::arg("window_edges") = "sampled")
        .def("begin_window", &EnergyWindows::begin, nb::arg("key"), nb::arg("sync_execution") = true,
             nb::arg("restart") = false,
             "Begins the window `key`. ValueError when it is already open (unless restart=True).")
        .def("end_window", &EnergyWindows::end, nb::arg("key"), nb::arg("sync_execution") = true,
             nb::arg("cancel") = false,
             "Ends the window `key` and returns its Measurement (zeros when cancel=True). ValueError when it is "
             "not open.")
        .def(
            "_stop_threads",
            [](EnergyWindows& w) {
                ReleasedGil release;
                w.monitor->stop_threads();
            },
            "Joins the monitor's background threads (interpreter exit); windows keep working. Idempotent.")
        .def(
            "reset_windows", [](EnergyWindows& w) { return w.monitor->reset_windows(); },
            "Drops every open window; returns their names.")
        .def_prop_ro(
            "open_windows", [](const EnergyWindows& w) { return w.monitor->open_windows(); },
            "Names of the windows now open.")
        .def_prop_ro(
            "gpu_indices", [](const EnergyWindows& w) { return w.monitor->gpu_indices(); },
            "Monitored GPU indices (CUDA indices).")
        .def_prop_ro(
            "cpu_indices", [](const EnergyWindows& w) { return w.monitor->cpu_indices(); },
            "Monitored CPU package indices.")
        .def("_native_window_pairs", &EnergyWindows::native_pairs, nb::arg("count"),
             "Benchmark hook: `count` begin+end pairs through the C++ API; returns the median ns per pair.")
        .def("_native_device_reads", &EnergyWindows::native_reads, nb::arg("count"),
             "Benchmark hook: median ns to read every monitored GPU's energy counter once (C++).");
}

nb::dict timeline_dict(const std::map<unsigned, std::vector<PowerSample>>& lines) {
    nb::dict d;
    for (const auto& [gpu, samples] : lines) {
        nb::list l;
        for (const auto& s : samples) l.append(nb::make_tuple(to_unix(s.time), s.power.count()));
        d[nb::cast(gpu)] = l;
    }
    return d;
}

struct PowerTimelines {
    nb::object gpus_owner;
    std::unique_ptr<PowerMonitor> monitor;
};

// The sampling thread: started, stopped, and what it has done.
void bind_power_sampling(nb::class_<PowerTimelines>& timelines) {
    timelines
        .def(
            "__init__",
            [](PowerTimelines* self, nb::object gpus, std::vector<unsigned> gpu_indices,
               std::optional<double> update_period, std::size_t max_samples, std::vector<std::string> domains) {
                PowerMonitorOptions options;
                options.gpu_indices = std::move(gpu_indices);
                if (update_period)
                    options.update_period = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::duration<double>(*update_period));
                options.max_samples_per_gpu = max_samples;
                for (const auto& d : domains) options.domains.push_back(parse_domain(d));
                const Gpus& g = nb::cast<GpuSet&>(gpus).gpus;
                auto started = [&] {
                    ReleasedGil release;
                    return PowerMonitor::start(g, std::move(options));
                }();
                new (self) PowerTimelines{gpus, unwrap(std::move(started), ErrorFamily::Value)};
            },
            nb::arg("gpus"), nb::arg("gpu_indices"), nb::arg("update_period").none(), nb::arg("max_samples"),
            nb::arg("domains"))
        .def(
            "stop",
            [](PowerTimelines& p) {
                ReleasedGil release;
                p.monitor->stop();
            },
            "Stops and joins the sampling thread (queries keep working). Idempotent.")
        .def_prop_ro(
            "update_period",
            [](const PowerTimelines& p) { return std::chrono::duration<double>(p.monitor->update_period()).count(); },
            "Sampling period (s).")
        .def_prop_ro(
            "gpu_indices", [](const PowerTimelines& p) { return p.monitor->gpu_indices(); }, "Sampled GPU indices.")
        .def_prop_ro(
            "power_domains",
            [](const PowerTimelines& p) {
                std::vector<std::string> out;
                for (auto d : p.monitor->domains()) out.emplace_back(to_string(d));
                return out;
            },
            "Monitored domains ('device_instant', 'device_average', 'memory_average').")
        .def_prop_ro(
            "stats",
            [](const PowerTimelines& p) {
                auto s = p.monitor->stats();
                nb::dict d;
                d["sweeps"] = s.sweeps;
                d["reads"] = s.reads;
                d["failed_reads"] = s.failed_reads;
                d["stored_samples"] = s.stored_samples;
                d["sampling_cpu_time"] = std::chrono::duration<double>(s.sampling_cpu_time).count();
                d["last_error"] = s.last_error ? nb::cast(s.last_error->describe()) : nb::none();
                return d;
            },
            "What the sampling thread has done: sweeps, reads, failed_reads, stored_samples, its CPU time (s).");
}

// The stored readings, as timelines.
void bind_power_timelines(nb::class_<PowerTimelines>& timelines) {
    timelines
        .def(
            "get_power_timeline",
            [](const PowerTimelines& p, std::string_view domain, std::optional<DeviceIndex> gpu,
               std::optional<double> start, std::optional<double> end) {
                auto d = parse_domain(domain);
                auto all = p.monitor->all_power_timelines(to_steady(start), to_steady(end));
                auto it = all.find(d);
                if (it == all.end()) {
                    raise_error(
                        Error{ErrorCode::InvalidArgument, fmt::format("power domain '{}' is not monitored", domain),
                              "pass it in power_domains when creating the PowerMonitor", 0},
                        ErrorFamily::Value);
                }
                std::map<unsigned, std::vector<PowerSample>> lines;
                for (auto& [g, s] : it->second)
                    if (selected(gpu, g)) lines.emplace(g, std::move(s));
                return timeline_dict(lines);
            },
            nb::arg("power_domain"), nb::arg("gpu_index") = nb::none(), nb::arg("start_time") = nb::none(),
            nb::arg("end_time") = nb::none(),
            "{gpu: [(unix time, W), ...]} within [start_time, end_time], each change once.")
        .def(
            "get_all_power_timelines",
            [](const PowerTimelines& p, std::optional<DeviceIndex> gpu, std::optional<double> start,
               std::optional<double> end) {
                nb::dict out;
                for (auto& [d, lines] : p.monitor->all_power_timelines(to_steady(start), to_steady(end))) {
                    std::map<unsigned, std::vector<PowerSample>> kept;
                    for (auto& [g, s] : lines)
                        if (selected(gpu, g)) kept.emplace(g, std::move(s));
                    out[std::string(to_string(d)).c_str()] = timeline_dict(kept);
                }
                return out;
            },
            nb::arg("gpu_index") = nb::none(), nb::arg("start_time") = nb::none(), nb::arg("end_time") = nb::none(),
            "{domain: {gpu: [(unix time, W), ...]}}.");
}

// Energy and power from the stored readings.
void bind_power_queries(nb::class_<PowerTimelines>& timelines) {
    timelines
        .def(
            "get_energy",
            [](const PowerTimelines& p, double start, double end,
               std::string_view domain) -> std::optional<std::map<unsigned, double>> {
                // What was measured of [start, end], as the original integrates
                // the readings inside it: `start = time.time(); pm = PowerMonitor()`
                // asks for a little before the first reading.
                const PowerDomain d = parse_domain(domain);
                Timestamp from = to_steady(start);
                Timestamp to = to_steady(end);
                if (to >= from) {
                    auto span = p.monitor->covered_span(d);
                    if (!span) return std::nullopt;  // no reading yet (the original's None)
                    if (from < span->second && to > span->first) {
                        from = std::max(from, span->first);
                        to = std::min(to, span->second);
                    }
                }
                auto by_gpu = unwrap(p.monitor->energy_by_gpu(from, to, d), ErrorFamily::Value);
                // Every GPU unknown (e.g. the interval is outside what was
                // sampled): the caller's mistake, a ValueError as before.
                if (std::none_of(by_gpu.begin(), by_gpu.end(), [](const auto& e) { return e.second.ok(); })) {
                    if (!by_gpu.empty()) raise_error(by_gpu.begin()->second.error(), ErrorFamily::Value);
                }
                std::map<unsigned, double> out;
                for (const auto& [g, j] : by_gpu) {
                    if (j) {
                        out[g] = j->count();
                        continue;
                    }
                    out[g] = std::numeric_limits<double>::quiet_NaN();
                    warn_unavailable(g,
                                     "has no power readings over the whole interval (stopped answering?), its "
                                     "energy is NaN",
                                     j.error().describe(), 2);
                }
                return out;
            },
            nb::arg("start_time"), nb::arg("end_time"), nb::arg("power_domain"),
            "{gpu: J} over the part of [start_time, end_time] the readings cover (each reading held until the "
            "next); None before the first reading. A GPU whose readings stop inside it while the others' do not "
            "(lost) is NaN, with a UserWarning naming it and the cause; ValueError when no reading falls in it.")
        .def(
            "get_power",
            [](const PowerTimelines& p, std::optional<double> at,
               std::string_view domain) -> std::optional<std::map<unsigned, double>> {
                auto power = p.monitor->power(to_steady(at), parse_domain(domain));
                if (!power) return std::nullopt;
                std::map<unsigned, double> out;
                for (const auto& [g, w] : *power) out[g] = w.count();
                return out;
            },
            nb::arg("time") = nb::none(), nb::arg("power_domain") = "device_instant",
            "{gpu: W} in force at `time` (default: latest), or None before any sample.");
}

void bind_power_monitor(nb::module_& m) {
    nb::class_<PowerTimelines> timelines(m, "PowerTimelines", "Native power sampling thread (base of PowerMonitor).");
    bind_power_sampling(timelines);
    bind_power_timelines(timelines);
    bind_power_queries(timelines);
}

struct TemperatureTimelines {
    nb::object gpus_owner;
    std::unique_ptr<TemperatureMonitor> monitor;
};

void bind_temperature_monitor(nb::module_& m) {
    nb::class_<TemperatureTimelines>(m, "TemperatureTimelines",
                                     "Native temperature sampling thread (base of TemperatureMonitor).")
        .def(
            "__init__",
            [](TemperatureTimelines* self, nb::object gpus, std::vector<unsigned> gpu_indices, double update_period,
               std::size_t max_samples) {
                TemperatureMonitorOptions options;
                options.gpu_indices = std::move(gpu_indices);
                options.update_period =
                    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(update_period));
                options.max_samples_per_gpu = max_samples;
                const Gpus& g = nb::cast<GpuSet&>(gpus).gpus;
                auto started = [&] {
                    ReleasedGil release;
                    return TemperatureMonitor::start(g, std::move(options));
                }();
                new (self) TemperatureTimelines{gpus, unwrap(std::move(started), ErrorFamily::Value)};
            },
            nb::arg("gpus"), nb::arg("gpu_indices"), nb::arg("update_period"), nb::arg("max_samples"))
        .def(
            "stop",
            [](TemperatureTimelines& t) {
                ReleasedGil release;
                t.monitor->stop();
            },
            "Stops and joins the sampling thread. Idempotent.")
        .def_prop_ro(
            "gpu_indices", [](const TemperatureTimelines& t) { return t.monitor->gpu_indices(); },
            "Sampled GPU indices.")
        .def(
            "get_temperature_timeline",
            [](const TemperatureTimelines& t, std::optional<DeviceIndex> gpu, std::optional<double> start,
               std::optional<double> end) {
                nb::dict d;
                for (auto& [g, samples] : t.monitor->all_temperature_timelines(to_steady(start), to_steady(end))) {
                    if (!selected(gpu, g)) continue;
                    nb::list l;
                    for (const auto& s : samples)
                        l.append(
                            nb::make_tuple(to_unix(s.time), static_cast<long>(std::lround(s.temperature.count()))));
                    d[nb::cast(g)] = l;
                }
                return d;
            },
            nb::arg("gpu_index") = nb::none(), nb::arg("start_time") = nb::none(), nb::arg("end_time") = nb::none(),
            "{gpu: [(unix time, °C), ...]}.")
        .def(
            "get_temperature",
            [](const TemperatureTimelines& t, std::optional<double> at) -> std::optional<std::map<unsigned, long>> {
                auto temps = t.monitor->temperature(to_steady(at));
                if (!temps) return std::nullopt;
                std::map<unsigned, long> out;
                for (const auto& [g, c] : *temps) out[g] = std::lround(c.count());
                return out;
            },
            nb::arg("time") = nb::none(), "{gpu: °C} in force at `time` (default: latest), or None.");
}

}  // namespace

void EnergyWindows::begin(std::string_view key, bool sync_execution, bool restart) {
    if (sync_execution && !sync.is_none()) sync(gpu_index_list);
    Status status;
    {
        ReleasedGil release;
        status = monitor->begin_window(key, false, restart);
    }
    check(status, ErrorFamily::Value);
}

Measurement EnergyWindows::end(std::string_view key, bool sync_execution, bool cancel) {
    if (sync_execution && !cancel && !sync.is_none()) sync(gpu_index_list);
    Result<Measurement> result = [&] {
        ReleasedGil release;
        return monitor->end_window(key, false, cancel);
    }();
    Measurement m = unwrap(std::move(result), ErrorFamily::Value);
    // The original's warnings come from end_window: for sampled edges from
    // the GPU values' tally (one pass over the two frames, no driver call,
    // no per-GPU allocation); the values and the Python dicts stay to be
    // built when first read.
    if (!cancel) warn_about(m, key);
    return m;
}

void EnergyWindows::warn_about(const Measurement& m, std::string_view key) {
    const auto tally = m.gpu_energy.tally();
    for (const auto& [gpu, why] : tally.lost) {
        warn_unavailable(gpu,
                         fmt::format("was lost during window '{}', its energy is NaN in gpu_energy and left out of "
                                     "total_energy",
                                     key),
                         why.empty() ? std::string("it stopped answering") : why, 1);
    }
    if (approx || warned_zero || !tally.measured_zero) return;
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The energy consumption of one or more GPUs was measured as zero: the window is shorter "
                     "than the energy counter's update period. Use a longer window, or "
                     "approx_instant_energy=True.",
                     1) != 0)
        throw nb::python_error();
    warned_zero = true;
}

double EnergyWindows::native_pairs(std::size_t count) {
    std::vector<double> ns;
    ns.reserve(count);
    ReleasedGil release;
    for (std::size_t i = 0; i < count; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        monitor->begin_window("__zeus_native_bench", false, false).value();
        auto r = monitor->end_window("__zeus_native_bench", false, false);
        const auto t1 = std::chrono::steady_clock::now();
        static_cast<void>(r.value());  // throws what failed
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    if (ns.empty()) return 0.0;
    std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
    return ns[ns.size() / 2];
}

double EnergyWindows::native_reads(std::size_t count) const {
    std::vector<double> ns;
    ns.reserve(count);
    const Gpus& g = gpus();
    ReleasedGil release;
    for (std::size_t i = 0; i < count; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        for (unsigned index : monitor->gpu_indices()) static_cast<void>(g[index].energy_snapshot().value());
        const auto t1 = std::chrono::steady_clock::now();
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    if (ns.empty()) return 0.0;
    std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
    return ns[ns.size() / 2];
}

void bind_monitors(nb::module_& m) {
    m.def(
        "infer_counter_update_period",
        [](nb::object gpus, const std::vector<unsigned>& gpu_indices) {
            const Gpus& g = nb::cast<GpuSet&>(gpus).gpus;
            Result<std::chrono::nanoseconds> fastest = Error{ErrorCode::InvalidArgument, "no GPU index was given",
                                                             "pass at least one GPU index", 0};
            {
                ReleasedGil release;
                for (unsigned i : gpu_indices) {
                    auto period = infer_counter_update_period(g[i], PowerDomain::DeviceInstant);
                    if (!period) {
                        fastest = period;
                        break;
                    }
                    if (!fastest || *period < *fastest) fastest = period;
                }
            }
            return std::chrono::duration<double>(unwrap(std::move(fastest), ErrorFamily::Gpu)).count();
        },
        nb::arg("gpus"), nb::arg("gpu_indices"),
        "Half the shortest interval between power-reading changes over these GPUs, capped at 0.1 s (s).");
    bind_measurement(m);
    bind_energy_monitor(m);
    bind_power_monitor(m);
    bind_temperature_monitor(m);
}

}  // namespace zeus::python
