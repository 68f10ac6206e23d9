// zeus_native.optimizer.batch_size's native half: the C++ batch-size
// optimizer client (zeus::bso::BatchSizeOptimizer) measuring through the
// ZeusMonitor's native EnergyMonitor. The Python layer gives the original's
// class, JobSpec and exceptions.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.hpp"
#include "monitors.hpp"
#include "zeus/bso/client.hpp"

namespace zeus::python {
namespace {

struct BsoClient {
    nb::object monitor_owner;  // keeps the EnergyMonitor alive as long as the client
    std::unique_ptr<bso::BatchSizeOptimizer> client;

    bso::BatchSizeOptimizer& get() {
        if (!client) throw std::runtime_error("the batch-size optimizer client was closed; create a new one");
        return *client;
    }
};

// Runs `call` without the GIL; a server or monitor error becomes a
// RuntimeError with the problem and its fix (the Python layer raises the
// original's ZeusBSORuntimError from it).
template <class Call>
auto released(Call&& call) {
    try {
        ReleasedGil release;
        return call();
    } catch (const ZeusError& e) {
        throw std::runtime_error(e.error().describe());
    }
}

}  // namespace

void bind_batch_size(nb::module_& m) {
    nb::class_<BsoClient>(m, "BatchSizeOptimizerClient", "Native batch-size optimizer client (zeus::bso).")
        .def("__init__",
             [](BsoClient* self, nb::object monitor, const std::string& server_url, std::optional<std::string> job_id,
                const std::string& job_id_prefix, const std::vector<std::int64_t>& batch_sizes,
                std::int64_t default_batch_size, double eta_knob, std::optional<double> beta_knob, double target_metric,
                bool higher_is_better_metric, std::int64_t max_epochs, std::int64_t num_pruning_rounds,
                std::int64_t window_size, double mab_prior_mean, double mab_prior_precision,
                std::int64_t mab_num_explorations, std::optional<std::int64_t> mab_seed, int rank) {
                 EnergyWindows& windows = nb::cast<EnergyWindows&>(monitor);
                 bso::JobSpec job;
                 job.job_id = std::move(job_id);
                 job.job_id_prefix = job_id_prefix;
                 job.batch_sizes = batch_sizes;
                 job.default_batch_size = default_batch_size;
                 job.eta_knob = eta_knob;
                 job.beta_knob = beta_knob;
                 job.target_metric = target_metric;
                 job.higher_is_better_metric = higher_is_better_metric;
                 job.max_epochs = max_epochs;
                 job.num_pruning_rounds = num_pruning_rounds;
                 job.window_size = window_size;
                 job.mab_prior_mean = mab_prior_mean;
                 job.mab_prior_precision = mab_prior_precision;
                 job.mab_num_explorations = mab_num_explorations;
                 job.mab_seed = mab_seed;
                 auto gpus = unwrap(bso::gpu_config(windows.gpus(), windows.monitor->gpu_indices()), ErrorFamily::Runtime);
                 auto client = released([&] {
                     return std::make_unique<bso::BatchSizeOptimizer>(*windows.monitor, server_url, std::move(job),
                                                                      std::move(gpus), rank);
                 });
                 new (self) BsoClient{std::move(monitor), std::move(client)};
             },
             nb::arg("monitor"), nb::arg("server_url"), nb::arg("job_id").none(), nb::arg("job_id_prefix"),
             nb::arg("batch_sizes"), nb::arg("default_batch_size"), nb::arg("eta_knob"), nb::arg("beta_knob").none(),
             nb::arg("target_metric"), nb::arg("higher_is_better_metric"), nb::arg("max_epochs"),
             nb::arg("num_pruning_rounds"), nb::arg("window_size"), nb::arg("mab_prior_mean"),
             nb::arg("mab_prior_precision"), nb::arg("mab_num_explorations"), nb::arg("mab_seed").none(),
             nb::arg("rank"))
        .def_prop_ro("job_id", [](BsoClient& c) { return c.get().job().job_id.value_or(""); })
        .def_prop_ro("batch_sizes", [](BsoClient& c) { return c.get().job().batch_sizes; })
        .def_prop_ro("training_finished", [](BsoClient& c) { return c.get().training_finished(); })
        .def("get_batch_size", [](BsoClient& c) { return released([&] { return c.get().get_batch_size(); }); })
        .def("on_train_begin", [](BsoClient& c) { released([&] { c.get().on_train_begin(); }); })
        .def(
            "on_evaluate",
            [](BsoClient& c, double metric) -> std::optional<std::string> {
                // The server stopped a run short of its target: the message, for
                // the original's ZeusBSOTrainFailError.
                try {
                    released([&] { c.get().on_evaluate(metric); });
                } catch (const bso::TrainFailError& e) {
                    return std::string(e.what());
                }
                return std::nullopt;
            },
            nb::arg("metric"))
        .def("close", [](BsoClient& c) {
            // The destructor ends the trial (PATCH /trials), the original's atexit hook.
            released([&] { c.client.reset(); });
        });
}

}  // namespace zeus::python
