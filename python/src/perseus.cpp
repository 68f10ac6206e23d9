// zeus_native.optimizer.pipeline_frequency's native half: Perseus's client
// (zeus::optimizer::PipelineFrequencyOptimizer) over one GPU of a GPUs set.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "devices.hpp"
#include "zeus/optimizer/pipeline_frequency.hpp"

namespace zeus::python {

namespace {

struct PipelineFrequency {
    nb::object gpus_owner;  // keeps the GPU alive as long as the optimizer
    std::unique_ptr<optimizer::PipelineFrequencyOptimizer> optimizer;
};

}  // namespace

void bind_perseus(nb::module_& m) {
    nb::class_<PipelineFrequency>(m, "PipelineFrequencyOptimizer", "Perseus's client for one rank (native).")
        .def(
            "__init__",
            [](PipelineFrequency* self, nb::object gpus, long device_id, optimizer::PipelineFrequencyOptions options,
               std::function<std::string(std::optional<std::string>)> share) {
                Gpu& gpu = nb::cast<GpuSet&>(gpus).gpu(device_id);
                if (share) {
                    options.share_job_id = [share](std::optional<std::string> id) -> Result<std::string> {
                        nb::gil_scoped_acquire gil;
                        try {
                            return share(std::move(id));
                        } catch (const std::exception& e) {
                            return Error{ErrorCode::Unknown, std::string("sharing the job id failed: ") + e.what(), "", 0};
                        }
                    };
                }
                Result<std::unique_ptr<optimizer::PipelineFrequencyOptimizer>> created = Error{};
                {
                    // The schedule waits for every rank: other Python threads (ranks) must run.
                    nb::gil_scoped_release released;
                    created = optimizer::PipelineFrequencyOptimizer::create(gpu, options);
                }
                new (self) PipelineFrequency{std::move(gpus), unwrap(std::move(created), ErrorFamily::Runtime)};
            },
            nb::arg("gpus"), nb::arg("device_id"), nb::arg("options"), nb::arg("share_job_id").none())
        .def_prop_ro("job_id", [](const PipelineFrequency& p) { return p.optimizer->job_id(); })
        .def_prop_ro("schedule", [](const PipelineFrequency& p) { return p.optimizer->schedule(); })
        .def_prop_ro("frequency_changes",
                     [](PipelineFrequency& p) { return p.optimizer->frequency_controller().changes(); })
        .def("on_step_begin", [](PipelineFrequency& p) { p.optimizer->on_step_begin(); })
        .def("on_step_end", [](PipelineFrequency& p) { check(p.optimizer->on_step_end(), ErrorFamily::Runtime); })
        .def("on_instruction_begin",
             [](PipelineFrequency& p, const std::string& name) {
                 check(p.optimizer->on_instruction_begin(name), ErrorFamily::Runtime);
             })
        .def("on_instruction_end", [](PipelineFrequency& p, const std::string& name) { p.optimizer->on_instruction_end(name); })
        .def("close", [](PipelineFrequency& p) {
            if (p.optimizer) check(p.optimizer->frequency_controller().end(), ErrorFamily::Runtime);
        });

    nb::class_<optimizer::PipelineFrequencyOptions>(m, "PipelineFrequencyOptions")
        .def(nb::init<>())
        .def_rw("server_url", &optimizer::PipelineFrequencyOptions::server_url)
        .def_rw("rank", &optimizer::PipelineFrequencyOptions::rank)
        .def_rw("dp_rank", &optimizer::PipelineFrequencyOptions::dp_rank)
        .def_rw("pp_rank", &optimizer::PipelineFrequencyOptions::pp_rank)
        .def_rw("tp_rank", &optimizer::PipelineFrequencyOptions::tp_rank)
        .def_rw("dp_degree", &optimizer::PipelineFrequencyOptions::dp_degree)
        .def_rw("pp_degree", &optimizer::PipelineFrequencyOptions::pp_degree)
        .def_rw("tp_degree", &optimizer::PipelineFrequencyOptions::tp_degree)
        .def_rw("world_size", &optimizer::PipelineFrequencyOptions::world_size)
        .def_rw("job_metadata", &optimizer::PipelineFrequencyOptions::job_metadata);
}

}  // namespace zeus::python
