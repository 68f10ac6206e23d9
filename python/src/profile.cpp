// zeus_native.profile's native half: thermally stable profiling of a Python
// callable. The callable runs with the GIL; sleeps and device reads without.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "communicator.hpp"
#include "monitors.hpp"
#include "zeus/profile/profile.hpp"

namespace zeus::python {

namespace {

using namespace zeus::profile;

// Calls `fn` (kept alive by the caller's frame) from native code, taking the GIL.
Target python_target(nb::handle fn) {
    return [fn] {
        AcquiredGil acquire;
        fn();
    };
}
SyncFunction python_sync(nb::handle sync) {
    if (sync.is_none()) return {};
    return [sync](const std::vector<unsigned>& gpus) {
        AcquiredGil acquire;
        nb::list l;
        for (unsigned g : gpus) l.append(g);
        sync(l);
    };
}

// The profiler's progress (rank 0 only) as the original's INFO log lines, through
// zeus_native.profile's logger. A failing log call (a broken handler) must not end
// the profiling: it is reported as unraisable, as logging's own errors are.
ProgressFunction python_progress_log() {
    return [](const ProgressEvent& event) {
        AcquiredGil acquire;
        try {
            nb::module_::import_("zeus_native.profile").attr("_log_progress")(event.message);
        } catch (nb::python_error& e) {
            e.discard_as_unraisable("zeus_native.profile");
        }
    };
}

// Runs a profiling call without the GIL. In a distributed job (torch.distributed
// up) the ranks' trials are combined as the original's: energy summed, time the
// slowest rank's, temperatures averaged; only rank 0 logs progress.
template <class F>
auto run_released(nb::handle monitor, nb::handle target, F&& f) {
    EnergyWindows& w = nb::cast<EnergyWindows&>(monitor);
    auto communicator = framework_communicator();
    ProfileContext ctx{w.gpus(), *w.monitor, python_sync(w.sync), communicator.get()};
    ctx.progress = python_progress_log();
    Target t = python_target(target);
    ReleasedGil release;
    return f(ctx, t);
}

}  // namespace

void bind_profile(nb::module_& m) {
    nb::class_<TrialResult>(m, "TrialResult", "One measurement trial (the original's TrialResult).")
        .def_ro("energy_per_iter", &TrialResult::energy_per_iter, "J per iteration.")
        .def_ro("time_per_iter", &TrialResult::time_per_iter, "s per iteration.")
        .def_ro("total_energy", &TrialResult::total_energy, "J over the window.")
        .def_ro("total_time", &TrialResult::total_time, "s, the window.")
        .def_ro("iterations", &TrialResult::iterations, "Iterations in the window.")
        .def_ro("temperature_before", &TrialResult::temperature_before, "°C before.")
        .def_ro("temperature_after", &TrialResult::temperature_after, "°C after.")
        .def("__repr__", [](const TrialResult& t) {
            return "TrialResult(energy_per_iter=" + std::string(nb::repr(nb::float_(t.energy_per_iter)).c_str()) +
                   ", time_per_iter=" + nb::repr(nb::float_(t.time_per_iter)).c_str() +
                   ", total_energy=" + nb::repr(nb::float_(t.total_energy)).c_str() +
                   ", total_time=" + nb::repr(nb::float_(t.total_time)).c_str() +
                   ", iterations=" + std::to_string(t.iterations) + ")";
        });
    nb::class_<SweepResult>(m, "SweepResult", "One swept value over its trials (the original's SweepResult).")
        .def_ro("measurement_duration", &SweepResult::measurement_duration, "Measurement window (s).")
        .def_ro("cooldown_duration", &SweepResult::cooldown_duration, "Idle cool-down before each trial (s).")
        .def_ro("trials", &SweepResult::trials, "The TrialResults.")
        .def_ro("energy_mean", &SweepResult::energy_mean, "Mean energy per iteration (J).")
        .def_ro("energy_std", &SweepResult::energy_std, "Sample standard deviation of energy per iteration (J; 0 with one trial).")
        .def_ro("avg_temperature_before", &SweepResult::avg_temperature_before, "Mean temperature before the trials (°C).")
        .def_ro("avg_temperature_after", &SweepResult::avg_temperature_after, "Mean temperature after the trials (°C).")
        .def_ro("avg_total_time", &SweepResult::avg_total_time, "Mean window length (s).")
        .def_ro("avg_total_energy", &SweepResult::avg_total_energy, "Mean window energy (J).")
        .def_ro("is_valid", &SweepResult::is_valid, "energy_std below the threshold.")
        .def("__str__", &SweepResult::to_string, "One line, the original's format.");
    nb::class_<SweepReport>(m, "SweepReport", "A sweep (the original's SweepReport); str() is its report.")
        .def_ro("sweep_param", &SweepReport::sweep_param, "(name, swept values).")
        .def_ro("fixed_param", &SweepReport::fixed_param, "(name, value) of the parameter held fixed.")
        .def_ro("entries", &SweepReport::entries, "One SweepResult per swept value.")
        .def("__str__", &SweepReport::to_string, "A header line and one line per entry, the original's format.");

    m.def(
        "measure",
        [](nb::handle target, nb::handle monitor, double measurement, double cooldown, std::size_t warmup,
           std::size_t calibration, std::optional<double> settle) {
            auto r = run_released(monitor, target, [&](const ProfileContext& ctx, const Target& t) {
                return profile::measure(ctx, t, MeasureOptions{measurement, cooldown, warmup, calibration, settle});
            });
            return unwrap(std::move(r), ErrorFamily::Value);
        },
        nb::arg("target_function"), nb::arg("zeus_monitor"), nb::arg("measurement_duration"),
        nb::arg("cooldown_duration"), nb::arg("num_warmup_iterations"), nb::arg("num_calibration_iterations"),
        nb::arg("warmup_settle_duration").none() = nb::none());
    m.def("profile_measurement_duration",
          [](nb::handle target, nb::handle monitor, std::vector<double> range, double cooldown, std::size_t trials,
             std::size_t warmup_trials, double threshold, std::size_t warmup, std::size_t calibration,
             std::optional<double> iteration_duration) {
              MeasurementSweepOptions o{std::move(range), cooldown, trials, warmup_trials, threshold, warmup,
                                        calibration, iteration_duration};
              auto r = run_released(monitor, target, [&](const ProfileContext& ctx, const Target& t) {
                  return profile::profile_measurement_duration(ctx, t, o);
              });
              return unwrap(std::move(r), ErrorFamily::Value);
          });
    m.def("profile_cooldown_duration",
          [](nb::handle target, nb::handle monitor, std::vector<double> range, double measurement,
             std::size_t trials, std::size_t warmup_trials, double threshold, std::size_t warmup,
             std::size_t calibration, std::optional<double> iteration_duration) {
              CooldownSweepOptions o{std::move(range), measurement, trials, warmup_trials, threshold, warmup,
                                     calibration, iteration_duration};
              auto r = run_released(monitor, target, [&](const ProfileContext& ctx, const Target& t) {
                  return profile::profile_cooldown_duration(ctx, t, o);
              });
              return unwrap(std::move(r), ErrorFamily::Value);
          });
    m.def("profile_parameters",
          [](nb::handle target, nb::handle monitor, std::vector<double> mrange, std::vector<double> crange,
             std::size_t trials, std::size_t warmup_trials, double threshold, std::size_t warmup,
             std::size_t calibration) {
              ParameterProfileOptions o{std::move(mrange), std::move(crange), trials, warmup_trials, threshold,
                                        warmup, calibration};
              auto r = run_released(monitor, target, [&](const ProfileContext& ctx, const Target& t) {
                  return profile::profile_parameters(ctx, t, o);
              });
              return unwrap(std::move(r), ErrorFamily::Value);
          });
}

}  // namespace zeus::python
