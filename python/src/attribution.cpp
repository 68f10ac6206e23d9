// A window's share of each GPU's energy (zeus::attribution::WindowShares) for
// ZeusMonitor(attribute_to=...): the native object beside the monitor, and
// each GPU's split as a plain dict that zeus_native.monitor.EnergyShare wraps.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.hpp"
#include "devices.hpp"
#include "zeus/attribution/window_shares.hpp"

namespace zeus::python {

namespace {

using attribution::ShareTarget;
using attribution::WindowShare;
using attribution::WindowShares;

struct Shares {
    nb::object gpus_owner;
    std::unique_ptr<WindowShares> shares;
};

ShareTarget target_of(std::string_view kind, std::vector<std::uint32_t> pids) {
    if (kind == "process") return ShareTarget{ShareTarget::Kind::Process, std::move(pids)};
    if (kind == "process_tree") return ShareTarget{ShareTarget::Kind::ProcessTree, std::move(pids)};
    if (kind == "pids") return ShareTarget::processes(std::move(pids));
    throw nb::value_error(("unknown share target kind '" + std::string(kind) +
                           "': use 'process', 'process_tree' or 'pids'")
                              .c_str());
}

double joules(std::int64_t mj) { return static_cast<double>(mj) / 1000.0; }

nb::dict share_dict(const WindowShare& s) {
    nb::dict d;
    d["gpu_energy"] = joules(s.gpu_mj);
    d["energy"] = joules(s.share_mj);
    d["known"] = s.known;
    d["method"] = s.method ? nb::object(nb::str(attribution::to_string(*s.method).data())) : nb::none();
    d["pids"] = s.pids;
    d["others"] = joules(s.others_mj());
    d["idle"] = joules(s.remainder.idle_mj);
    d["no_process"] = joules(s.remainder.no_process_mj);
    nb::dict processes;
    for (const attribution::Share& share : s.processes) processes[nb::int_(share.pid)] = joules(share.energy_mj());
    d["processes"] = processes;
    d["idle_power"] = s.idle_power ? nb::object(nb::float_(static_cast<double>(s.idle_power->count()) / 1000.0))
                                   : nb::none();
    d["warnings"] = s.warnings;
    return d;
}

}  // namespace

void bind_attribution(nb::module_& m) {
    nb::class_<Shares>(m, "WindowShares",
                       "Each GPU's window energy split among processes, for one target (ZeusMonitor(attribute_to=...)).",
                       nb::is_weak_referenceable())
        .def(
            "__init__",
            [](Shares* self, nb::object gpus, std::vector<unsigned> gpu_indices, std::string_view kind,
               std::vector<std::uint32_t> pids, std::string_view idle_policy,
               const std::map<unsigned, double>& idle_power_w, double poll_period_s) {
                attribution::WindowSharesOptions options;
                options.target = target_of(kind, std::move(pids));
                options.idle_policy = unwrap(attribution::parse_idle_policy(idle_policy), ErrorFamily::Value);
                for (const auto& [gpu, watts] : idle_power_w) {
                    options.idle_power.emplace(gpu, Milliwatts(static_cast<std::int64_t>(std::llround(watts * 1000))));
                }
                options.poll_period = std::chrono::milliseconds(std::llround(poll_period_s * 1000));
                const Gpus& g = nb::cast<GpuSet&>(gpus).gpus;
                auto opened = WindowShares::open(g, std::move(gpu_indices), std::move(options));
                new (self) Shares{gpus, unwrap(std::move(opened), ErrorFamily::Value)};
            },
            nb::arg("gpus"), nb::arg("gpu_indices"), nb::arg("kind"), nb::arg("pids"), nb::arg("idle_policy"),
            nb::arg("idle_power_w"), nb::arg("poll_period_s"))
        .def(
            "begin",
            [](Shares& s, std::string_view name) {
                ReleasedGil release;
                s.shares->begin(name);
            },
            nb::arg("name"), "Starts accounting the window `name` (again, when it is open).")
        .def(
            "end",
            [](Shares& s, std::string_view name, const Measurement& measured) {
                Result<std::map<unsigned, WindowShare>> split = [&] {
                    ReleasedGil release;
                    return s.shares->end(name, measured);
                }();
                nb::dict out;
                for (const auto& [gpu, share] : unwrap(std::move(split), ErrorFamily::Value)) {
                    out[nb::int_(gpu)] = share_dict(share);
                }
                return out;
            },
            nb::arg("name"), nb::arg("measured"),
            "Each GPU's split of the window's measured energy {index: dict}; closes the window.")
        .def(
            "cancel", [](Shares& s, std::string_view name) { s.shares->cancel(name); }, nb::arg("name"))
        .def("reset", [](Shares& s) { s.shares->reset(); })
        .def(
            "_stop_thread",
            [](Shares& s) {
                ReleasedGil release;
                s.shares->stop_thread();
            },
            "Joins the polling thread (interpreter exit). Idempotent.")
        .def_prop_ro(
            "target", [](const Shares& s) { return s.shares->target().describe(); },
            "Whose share: 'process 12', 'process 12 and its descendants', 'processes 12, 13'.");
}

}  // namespace zeus::python
