// zeus_native.device: the original's GPU/CPU/SoC method names (mW, mJ, MHz,
// °C as integers, like NVML) over zeus::Gpu, zeus::Cpu and zeus::Soc.
#include "devices.hpp"

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "bindings.hpp"
#include "zeus/report/environment_report.hpp"

namespace zeus::python {

Gpu& GpuSet::gpu(const DeviceIndex& index) const {
    auto position = index.position(gpus.size());
    if (!position) {
        raise_error(Error{ErrorCode::InvalidArgument,
                          fmt::format("GPU index {} is out of range: {} GPU(s) are visible", index.text(), gpus.size()),
                          gpus.empty() ? std::string("no GPU is visible; run `python -m zeus_native.show_env`")
                                       : fmt::format("use an index from 0 to {} (positions in CUDA_VISIBLE_DEVICES)",
                                                     gpus.size() - 1),
                          0},
                    ErrorFamily::Gpu);
    }
    Gpu& g = gpus[*position];
    check(g.status(), ErrorFamily::Gpu);
    return g;
}

Cpu& CpuSet::cpu(const DeviceIndex& index) const {
    auto position = index.position(cpus.size());
    if (!position) {
        raise_error(
            Error{ErrorCode::NotFound,
                  fmt::format("CPU index {} is out of range: {} CPU package(s) found", index.text(), cpus.size()),
                  "use an index of an intel-rapl:N package zone (python -m zeus_native.show_env lists them)", 0},
            ErrorFamily::Cpu);
    }
    return cpus[*position];
}

namespace {

// Called with the GIL held again (after on_gpu()).
template <class T>
T read(Result<T>&& r) {
    return unwrap(std::move(r), ErrorFamily::Gpu);
}

// Runs `f(gpu)` on the GPU at `index` with the GIL released (device calls may
// block on a driver or zeusd). The index is resolved first, with the GIL held:
// an unknown one raises a Python exception, which needs the GIL.
template <class F>
auto on_gpu(const GpuSet& set, const DeviceIndex& index, F&& f) {
    Gpu& gpu = set.gpu(index);
    ReleasedGil release;
    return f(gpu);
}

long long mw(Milliwatts p) { return p.count(); }

// What each GPU is, and what opening the set found.
void bind_gpu_identity(nb::class_<GpuSet>& gpus) {
    gpus.def("__len__", [](const GpuSet& s) { return s.gpus.size(); })
        .def_prop_ro(
            "init_error",
            [](const GpuSet& s) -> std::optional<std::string> {
                if (s.open_error) return python_text(*s.open_error);
                return std::nullopt;
            },
            "Why no GPU could be opened, or None.")
        .def_prop_ro(
            "backend_info",
            [](const GpuSet& s) {
                const auto& i = s.gpus.backend_info();
                nb::dict d;
                d["backend"] = i.backend;
                d["library_path"] = i.library_path;
                d["simulated"] = i.simulated;
                d["driver_version"] = i.driver_version;
                d["nvml_version"] = i.nvml_version;
                d["zeusd_endpoint"] = i.zeusd_endpoint;
                return d;
            },
            "Backend, library, driver versions, and the zeusd endpoint when GPU settings go through zeusd.")
        .def_prop_ro(
            "warnings", [](const GpuSet& s) { return s.gpus.warnings(); },
            "What went wrong opening individual GPUs, one line each.")
        .def(
            "get_name", [](const GpuSet& s, const DeviceIndex& i) { return s.gpu(i).identity().name; },
            nb::arg("gpu_index"), "The GPU's name.")
        .def(
            "get_uuid", [](const GpuSet& s, const DeviceIndex& i) { return s.gpu(i).identity().uuid; },
            nb::arg("gpu_index"), "The GPU's UUID.")
        .def(
            "get_physical_index",
            [](const GpuSet& s, const DeviceIndex& i) { return s.gpu(i).identity().physical_index; },
            nb::arg("gpu_index"), "The vendor library's index (what nvidia-smi shows).");
}

// Power limits and persistence: read and set (setting needs the privileges, or zeusd).
void bind_gpu_settings(nb::class_<GpuSet>& gpus) {
    gpus.def(
            "get_power_management_limit_constraints",
            [](const GpuSet& s, const DeviceIndex& i) {
                auto c = read(on_gpu(s, i, [&](Gpu& g) { return g.power_limit_constraints(); }));
                return std::make_pair(mw(c.min), mw(c.max));
            },
            nb::arg("gpu_index"), "(min, max) power limit in mW.")
        .def(
            "get_power_management_limit",
            [](const GpuSet& s, const DeviceIndex& i) {
                return mw(read(on_gpu(s, i, [&](Gpu& g) { return g.power_limit(); })));
            },
            nb::arg("gpu_index"), "Current power limit in mW.")
        .def(
            "get_power_management_default_limit",
            [](const GpuSet& s, const DeviceIndex& i) {
                return mw(read(on_gpu(s, i, [&](Gpu& g) { return g.default_power_limit(); })));
            },
            nb::arg("gpu_index"), "The default power limit in mW (what a reset restores).")
        .def(
            "set_power_management_limit",
            [](const GpuSet& s, const DeviceIndex& i, long long limit_mw, bool) {
                auto st = on_gpu(s, i, [&](Gpu& g) { return g.set_power_limit(Milliwatts(limit_mw)); });
                check(st, ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("power_limit_mw"), nb::arg("block") = true, "Sets the power limit (mW).")
        .def(
            "reset_power_management_limit",
            [](const GpuSet& s, const DeviceIndex& i, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.reset_power_limit(); }), ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("block") = true, "Restores the default power limit.")
        .def(
            "set_persistence_mode",
            [](const GpuSet& s, const DeviceIndex& i, bool enabled, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.set_persistence_mode(enabled); }), ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("enabled"), nb::arg("block") = true, "Sets persistence mode.")
        .def(
            "get_persistence_mode",
            [](const GpuSet& s, const DeviceIndex& i) {
                return read(on_gpu(s, i, [&](Gpu& g) { return g.persistence_mode(); }));
            },
            nb::arg("gpu_index"), "Whether persistence mode is on.");
}

// Supported and locked clocks.
void bind_gpu_clocks(nb::class_<GpuSet>& gpus) {
    gpus.def(
            "get_supported_memory_clocks",
            [](const GpuSet& s, const DeviceIndex& i) {
                std::vector<long long> out;
                for (auto c : read(on_gpu(s, i, [&](Gpu& g) { return g.supported_memory_clocks(); })))
                    out.push_back(c.count());
                return out;
            },
            nb::arg("gpu_index"), "Supported memory clocks (MHz).")
        .def(
            "get_supported_graphics_clocks",
            [](const GpuSet& s, const DeviceIndex& i, std::optional<long long> mem) {
                std::optional<Megahertz> memory;
                if (mem) memory = Megahertz(*mem);
                std::vector<long long> out;
                for (auto c : read(on_gpu(s, i, [&](Gpu& g) { return g.supported_graphics_clocks(memory); })))
                    out.push_back(c.count());
                return out;
            },
            nb::arg("gpu_index"), nb::arg("memory_clock_mhz") = nb::none(),
            "Supported graphics clocks (MHz) at a memory clock (default: the highest).")
        .def(
            "set_memory_locked_clocks",
            [](const GpuSet& s, const DeviceIndex& i, long long lo, long long hi, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.set_memory_locked_clocks(Megahertz(lo), Megahertz(hi)); }),
                      ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("min_clock_mhz"), nb::arg("max_clock_mhz"), nb::arg("block") = true,
            "Locks the memory clock to a range (MHz).")
        .def(
            "reset_memory_locked_clocks",
            [](const GpuSet& s, const DeviceIndex& i, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.reset_memory_locked_clocks(); }), ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("block") = true, "Unlocks the memory clock.")
        .def(
            "set_gpu_locked_clocks",
            [](const GpuSet& s, const DeviceIndex& i, long long lo, long long hi, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.set_gpu_locked_clocks(Megahertz(lo), Megahertz(hi)); }),
                      ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("min_clock_mhz"), nb::arg("max_clock_mhz"), nb::arg("block") = true,
            "Locks the graphics clock to a range (MHz).")
        .def(
            "reset_gpu_locked_clocks",
            [](const GpuSet& s, const DeviceIndex& i, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.reset_gpu_locked_clocks(); }), ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("block") = true, "Unlocks the graphics clock.")
        .def(
            "reset_locked_clocks",
            [](const GpuSet& s, const DeviceIndex& i, bool) {
                check(on_gpu(s, i, [&](Gpu& g) { return g.reset_locked_clocks(); }), ErrorFamily::Gpu);
            },
            nb::arg("gpu_index"), nb::arg("block") = true, "Unlocks graphics and memory clocks.");
}

// Power, energy and temperature.
void bind_gpu_readings(nb::class_<GpuSet>& gpus) {
    gpus.def(
            "get_instant_power_usage",
            [](const GpuSet& s, const DeviceIndex& i) {
                return mw(read(on_gpu(s, i, [&](Gpu& g) { return g.instant_power(); })).power);
            },
            nb::arg("gpu_index"), "Instant power (mW).")
        .def(
            "get_average_power_usage",
            [](const GpuSet& s, const DeviceIndex& i) {
                return mw(read(on_gpu(s, i, [&](Gpu& g) { return g.average_power(); })).power);
            },
            nb::arg("gpu_index"), "Average power (mW).")
        .def(
            "get_average_memory_power_usage",
            [](const GpuSet& s, const DeviceIndex& i) {
                return mw(read(on_gpu(s, i, [&](Gpu& g) { return g.memory_power(); })).power);
            },
            nb::arg("gpu_index"), "Average memory power (mW).")
        .def(
            "supports_get_total_energy_consumption",
            [](const GpuSet& s, const DeviceIndex& i) { return s.gpu(i).capabilities().energy_counter.supported; },
            nb::arg("gpu_index"), "Whether the GPU has an energy counter (Volta or newer).")
        .def(
            "get_total_energy_consumption",
            [](const GpuSet& s, const DeviceIndex& i) {
                return read(on_gpu(s, i, [&](Gpu& g) { return g.total_energy(); })).count();
            },
            nb::arg("gpu_index"), "Energy counter (mJ).")
        .def(
            "get_gpu_temperature",
            [](const GpuSet& s, const DeviceIndex& i) {
                return static_cast<long long>(
                    std::lround(read(on_gpu(s, i, [&](Gpu& g) { return g.temperature(); })).count()));
            },
            nb::arg("gpu_index"), "Temperature (°C).");
}

void bind_gpus(nb::module_& m) {
    nb::class_<GpuSet> gpus(m, "GPUs", "The visible GPUs (the original's GPUs; indices are CUDA indices).");
    bind_gpu_identity(gpus);
    bind_gpu_settings(gpus);
    bind_gpu_clocks(gpus);
    bind_gpu_readings(gpus);

    m.def("open_gpus", [] {
        auto set = std::make_unique<GpuSet>();
        auto options = GpuOptions::from_environment();
        if (!options) {
            set->open_error = options.error();
            return set;
        }
        set->options = *options;
        {
            ReleasedGil release;
            set->gpus = Gpus::open(*options);
        }
        if (!set->gpus.status()) set->open_error = set->gpus.status().error();
        return set;
    }, "Opens the GPUs named by the environment (CUDA_VISIBLE_DEVICES, ZEUS_SIMULATE, ZEUSD_*).");
}

void bind_cpus(nb::module_& m) {
    nb::class_<CpuSet>(m, "CPUs", "The CPU packages with RAPL energy counters (the original's CPUs).")
        .def("__len__", [](const CpuSet& s) { return s.cpus.size(); })
        .def_prop_ro(
            "init_error",
            [](const CpuSet& s) -> std::optional<std::string> {
                if (s.open_error) return python_text(*s.open_error);
                return std::nullopt;
            },
            "Why no CPU package could be opened, or None.")
        .def_prop_ro(
            "init_error_code",
            [](const CpuSet& s) -> std::optional<std::string> {
                if (s.open_error) return std::string(to_string(s.open_error->code));
                return std::nullopt;
            },
            "The kind of init_error ('no permission', 'not found', ...), or None.")
        .def_prop_ro(
            "powercap_root", [](const CpuSet& s) { return s.cpus.powercap_root(); },
            "The powercap directory the packages were found in.")
        .def(
            "get_zone_path", [](const CpuSet& s, const DeviceIndex& i) { return s.cpu(i).identity().path; },
            nb::arg("cpu_index"), "The package's RAPL zone directory.")
        .def(
            "get_status",
            [](const CpuSet& s, const DeviceIndex& i) -> std::optional<std::string> {
                auto st = s.cpu(i).status();
                if (st) return std::nullopt;
                return python_text(st.error());
            },
            nb::arg("cpu_index"), "None when the package counter is readable, else why not.")
        .def(
            "get_total_energy_consumption",
            [](const CpuSet& s, const DeviceIndex& i) {
                Cpu& c = s.cpu(i);
                auto e = [&] {
                    ReleasedGil release;
                    return c.total_energy();
                }();
                auto v = unwrap(std::move(e), ErrorFamily::Cpu);
                std::optional<double> dram;
                if (v.dram) dram = v.dram->count() * 1000.0;
                return std::make_pair(v.package.count() * 1000.0, dram);
            },
            nb::arg("cpu_index"), "(package mJ, DRAM mJ or None) since the set was opened.")
        .def(
            "_stop_threads",
            [](CpuSet& s) {
                ReleasedGil release;
                s.cpus.stop_sampling();
            },
            "Joins the counters' background reader (interpreter exit). Idempotent.")
        .def(
            "supports_get_dram_energy_consumption",
            [](const CpuSet& s, const DeviceIndex& i) { return s.cpu(i).has_dram() && s.cpu(i).dram_status().ok(); },
            nb::arg("cpu_index"), "Whether the package's DRAM energy can be read.");

    m.def("open_cpus", [] {
        auto set = std::make_unique<CpuSet>();
        auto options = CpuOptions::from_environment();
        if (!options) {
            set->open_error = options.error();
            return set;
        }
        {
            ReleasedGil release;
            set->cpus = Cpus::open(*options);
        }
        if (!set->cpus.status()) set->open_error = set->cpus.status().error();
        return set;
    }, "Opens the RAPL packages (ZEUS_POWERCAP_ROOT, or through zeusd with ZEUSD_*).");
}

void bind_soc(nb::module_& m) {
    nb::class_<SocSet>(m, "SoC", "The board's system-on-chip (NVIDIA Jetson), if any.")
        .def_prop_ro(
            "name", [](const SocSet& s) { return std::string(s.soc->name()); }, "'NVIDIA Jetson', or 'none'.")
        .def_prop_ro(
            "init_error",
            [](const SocSet& s) -> std::optional<std::string> {
                auto st = s.soc->status();
                if (st) return std::nullopt;
                return python_text(st.error());
            },
            "Why this machine's SoC cannot be measured (with the fix), or None.")
        .def(
            "get_available_metrics",
            [](const SocSet& s) {
                std::vector<std::string> out;
                for (auto metric : s.soc->available_metrics()) out.emplace_back(to_string(metric));
                return out;
            },
            "Metrics this SoC measures (cpu, gpu, total).")
        .def(
            "_stop_threads",
            [](SocSet& s) {
                ReleasedGil release;
                s.soc->stop_sampling();
            },
            "Joins the rails' background sampler (interpreter exit). Idempotent.")
        .def(
            "get_total_energy_consumption",
            [](const SocSet& s) {
                auto energy = [&] {
                    ReleasedGil release;
                    return s.soc->total_energy();
                }();
                nb::dict out;  // metric -> mJ since the SoC was opened, None when unreadable
                for (const auto& entry : unwrap(std::move(energy), ErrorFamily::Soc).metrics) {
                    out[std::string(to_string(entry.metric)).c_str()] =
                        entry.energy ? nb::cast(entry.energy->count() * 1000.0) : nb::none();
                }
                return out;
            },
            "{metric: mJ since the SoC was opened, or None when unreadable}.");
    m.def("open_soc", [] {
        auto set = std::make_unique<SocSet>();
        auto options = unwrap(SocOptions::from_environment(), ErrorFamily::Soc);
        set->soc = unwrap(open_soc(options), ErrorFamily::Soc);
        return set;
    }, "Opens the SoC (ZEUS_JETSON_SYSFS_ROOT for a mounted /sys).");
}

}  // namespace

void bind_devices(nb::module_& m) {
    bind_gpus(m);
    bind_cpus(m);
    bind_soc(m);
    m.def(
        "environment_report",
        [](GpuSet& gpus, const CpuSet& cpus, const SocSet& soc, bool probe_control) {
            ReleasedGil release;
            auto r = report::describe_environment(gpus.gpus, gpus.options, cpus.cpus, *soc.soc, probe_control);
            return std::make_tuple(r.json, r.human, r.anything_measurable);
        },
        nb::arg("gpus"), nb::arg("cpus"), nb::arg("soc"), nb::arg("probe_control") = false,
        "(json, human text, anything measurable): the report `zeus show-env` prints, from the same library code.");
}

}  // namespace zeus::python
