// zeus_native.optimizer.power_limit's native half: the optimum selectors and
// GlobalPowerLimitOptimizer over zeus::optimizer.
#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <span>
#include <tuple>
#include <type_traits>
#include <variant>

#include "bindings.hpp"
#include "communicator.hpp"
#include "devices.hpp"
#include "monitors.hpp"
#include "selector.hpp"
#include "zeus/optimizer/optimum_selector.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

namespace zeus::python {

const Gpus& EnergyWindows::gpus() const { return nb::cast<GpuSet&>(gpus_owner).gpus; }

namespace {

using optimizer::PowerLimitMeasurement;
using optimizer::SelectorPtr;

// A selector written in Python (a subclass of the original's abstract
// OptimumSelector): its _python_select([(W, J, s), ...]) returns the limit in
// W. The optimizer selects without the GIL, so it is taken here; the
// reference is released under the GIL.
class PythonSelector final : public optimizer::OptimumSelector {
  public:
    explicit PythonSelector(nb::handle user) : user_(user.ptr()) {
        Py_INCREF(user_);
        name_ = "python:" + nb::cast<std::string>(
                                nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(user_))).attr("__name__")));
    }
    PythonSelector(const PythonSelector&) = delete;
    PythonSelector& operator=(const PythonSelector&) = delete;
    ~PythonSelector() override {
        if (!Py_IsInitialized()) return;
        AcquiredGil gil;
        Py_DECREF(user_);
    }

    [[nodiscard]] std::string name() const override { return name_; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const optimizer::SelectionContext& /*context*/) const override {
        AcquiredGil gil;
        try {
            nb::list rows;
            for (const auto& m : measurements)
                rows.append(nb::make_tuple(m.power_limit.count() / 1000, m.energy.count(), m.time.count()));
            const double watts = nb::cast<double>(nb::handle(user_).attr("_python_select")(rows));
            return Milliwatts(static_cast<std::int64_t>(watts * 1000.0 + 0.5));
        } catch (nb::python_error& e) {
            return Error{ErrorCode::InvalidArgument, fmt::format("the optimum selector {} raised: {}", name_, e.what()),
                         "fix its select(measurements), which returns the chosen power limit in W", 0};
        } catch (const std::exception& e) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("the optimum selector {} did not return a power limit in W ({})", name_, e.what()),
                         "return an int (W) from select(measurements)", 0};
        }
    }

  private:
    PyObject* user_;
    std::string name_;
};

struct PowerLimitOptimizer {
    nb::object monitor_owner;
    // The ranks' aggregation in a torch.distributed job (null otherwise);
    // declared before the optimizer, which uses it until it is destroyed.
    std::unique_ptr<profile::Communicator> communicator;
    std::unique_ptr<optimizer::GlobalPowerLimitOptimizer> optimizer;

    // The framework sync of the optimizer's own windows failed: raised here,
    // as the same failure is at a window the user opens.
    void rethrow_sync_error() { nb::cast<EnergyWindows&>(monitor_owner).rethrow_sync_error(); }
};

// (power limit W, energy J, time s) -> the C++ measurement.
std::vector<PowerLimitMeasurement> measurements_from(const std::vector<std::tuple<double, double, double>>& rows) {
    std::vector<PowerLimitMeasurement> out;
    for (const auto& [w, j, s] : rows) {
        out.push_back({Milliwatts(static_cast<std::int64_t>(w * 1000.0 + 0.5)), Joules(j), Seconds(s)});
    }
    return out;
}

const char* state_name(const optimizer::PowerLimitState& state) {
    switch (state.index()) {
        case 0: return "Ready";
        case 1: return "Warmup";
        case 2: return "Profiling";
        default: return "Done";
    }
}

// A GPU lost in a window raises ZeusGPULostError, as the original's
// end_window does; the optimizer's other errors are RuntimeError.
ErrorFamily family_of(const Status& status) {
    return !status && status.error().code == ErrorCode::GpuLost ? ErrorFamily::Gpu : ErrorFamily::Runtime;
}

void bind_selectors(nb::module_& m) {
    nb::class_<Selector>(m, "Selector", "An optimum selector (native).")
        .def_prop_ro("name", [](const Selector& s) { return s.ptr->name(); }, "Short description, e.g. zeus-cost:eta=0.5.")
        .def("select",
             [](const Selector& s, const std::vector<std::tuple<double, double, double>>& rows, int world_size) {
                 auto measurements = measurements_from(rows);
                 auto chosen = s.ptr->select(measurements, {world_size});
                 return unwrap(std::move(chosen), ErrorFamily::Value).count() / 1000;
             },
             nb::arg("measurements"), nb::arg("world_size") = 1,
             "The chosen power limit (W) from [(power_limit W, energy J, time s), ...].");
    m.def("python_selector", [](nb::handle selector) { return Selector{std::make_shared<PythonSelector>(selector)}; },
          nb::arg("selector"), "A selector written in Python (its _python_select(rows) is asked).");
    m.def("time_selector", [] { return Selector{optimizer::time_selector()}; });
    m.def("energy_selector", [] { return Selector{optimizer::energy_selector()}; });
    m.def("zeus_cost_selector", [](double eta, std::optional<int> world_size) {
        return Selector{unwrap(optimizer::zeus_cost(eta, world_size), ErrorFamily::Value)};
    }, nb::arg("eta_knob"), nb::arg("world_size").none());
    m.def("max_slowdown_selector", [](double factor) {
        return Selector{unwrap(optimizer::max_slowdown_constraint(factor), ErrorFamily::Value)};
    }, nb::arg("factor"));
}

// Created over a ZeusMonitor's windows; driven by the training loop's callbacks.
void bind_optimizer_steps(nb::class_<PowerLimitOptimizer>& optimizer_class) {
    optimizer_class
        .def(
            "__init__",
            [](PowerLimitOptimizer* self, nb::object monitor, std::optional<Selector> selector, std::size_t wait,
               std::size_t warmup, std::size_t profile, double pl_step, std::optional<std::string> path) {
                EnergyWindows& windows = nb::cast<EnergyWindows&>(monitor);
                optimizer::PowerLimitOptimizerOptions options;
                if (selector) options.selector = selector->ptr;
                options.wait_steps = wait;
                options.warmup_steps = warmup;
                options.profile_steps = profile;
                options.pl_step = Watts(pl_step);
                if (path) options.profile_path = *path;
                // Every rank profiles the whole job: energy summed over the ranks,
                // time the slowest rank's (the original all-reduces them).
                auto communicator = framework_communicator();
                options.communicator = communicator.get();
                auto created = [&] {
                    ReleasedGil release;
                    return optimizer::GlobalPowerLimitOptimizer::create(windows.gpus(), *windows.monitor,
                                                                        std::move(options));
                }();
                new (self) PowerLimitOptimizer{monitor, std::move(communicator),
                                               unwrap(std::move(created), ErrorFamily::Runtime)};
            },
            nb::arg("monitor"), nb::arg("selector").none(), nb::arg("wait_steps"), nb::arg("warmup_steps"),
            nb::arg("profile_steps"), nb::arg("pl_step"), nb::arg("profile_path").none())
        .def("on_step_begin",
             [](PowerLimitOptimizer& p) {
                 Status s;
                 {
                     ReleasedGil release;
                     s = p.optimizer->on_step_begin();
                 }
                 p.rethrow_sync_error();
                 check(s, family_of(s));
             })
        .def("on_epoch_end",
             [](PowerLimitOptimizer& p) {
                 Status s;
                 {
                     ReleasedGil release;
                     s = p.optimizer->on_epoch_end();
                 }
                 p.rethrow_sync_error();
                 // Epochs too short to profile in: the optimizer has settled on the
                 // maximum limit and training goes on, as the message says. A
                 // warning, never an exception out of the training loop (the
                 // original keeps training too).
                 if (!s && s.error().code == ErrorCode::InvalidState) {
                     const std::string text = s.error().describe();
                     if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw nb::python_error();
                     return;
                 }
                 check(s, ErrorFamily::Runtime);
             })
        .def("close", [](PowerLimitOptimizer& p) {
            Status s;
            {
                ReleasedGil release;
                s = p.optimizer->close();
            }
            check(s, ErrorFamily::Runtime);
        });
}

// Where the optimizer is and what it has measured.
void bind_optimizer_state(nb::class_<PowerLimitOptimizer>& optimizer_class) {
    optimizer_class.def_prop_ro("state", [](const PowerLimitOptimizer& p) { return state_name(p.optimizer->state()); })
        .def_prop_ro(
            "state_detail",
            [](const PowerLimitOptimizer& p) {
                // (name, its power limit in mW, its steps left; 0 for Done)
                return std::visit(
                    [](const auto& s) -> std::tuple<std::string, long long, std::size_t> {
                        using S = std::decay_t<decltype(s)>;
                        if constexpr (std::is_same_v<S, optimizer::state::Ready>)
                            return {"Ready", s.next.count(), s.steps};
                        else if constexpr (std::is_same_v<S, optimizer::state::Warmup>)
                            return {"Warmup", s.limit.count(), s.steps};
                        else if constexpr (std::is_same_v<S, optimizer::state::Profiling>)
                            return {"Profiling", s.limit.count(), s.steps};
                        else
                            return {"Done", s.optimal.count(), 0};
                    },
                    p.optimizer->state());
            },
            "(state name, its power limit in mW, steps left).")
        .def_prop_ro("optimal_power_limit",
                     [](const PowerLimitOptimizer& p) -> std::optional<long long> {
                         auto o = p.optimizer->optimal_power_limit();
                         if (!o) return std::nullopt;
                         return o->count() / 1000;
                     })
        .def_prop_ro("power_limits",
                     [](const PowerLimitOptimizer& p) {
                         std::vector<long long> out;
                         for (auto c : p.optimizer->candidates()) out.push_back(c.count());
                         return out;
                     })
        .def_prop_ro("measurements",
                     [](const PowerLimitOptimizer& p) {
                         std::vector<std::tuple<long long, double, double>> out;
                         for (const auto& x : p.optimizer->measurements())
                             out.emplace_back(x.power_limit.count() / 1000, x.energy.count(), x.time.count());
                         return out;
                     })
        .def_prop_ro("warnings", [](const PowerLimitOptimizer& p) { return p.optimizer->warnings(); })
        .def("report", [](const PowerLimitOptimizer& p) {
            return unwrap(p.optimizer->report(), ErrorFamily::Runtime).to_string();
        });
}

}  // namespace

void bind_optimizer(nb::module_& m) {
    bind_selectors(m);
    nb::class_<PowerLimitOptimizer> optimizer_class(m, "PowerLimitOptimizer", "Native GlobalPowerLimitOptimizer.");
    bind_optimizer_steps(optimizer_class);
    bind_optimizer_state(optimizer_class);
}

}  // namespace zeus::python
