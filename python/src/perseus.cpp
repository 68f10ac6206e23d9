// zeus_native.optimizer.pipeline_frequency's native half: Perseus's client
// (zeus::perseus::PipelineFrequencyOptimizer) over one GPU of a GPUs set.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "devices.hpp"
#include "zeus/perseus/pipeline_frequency.hpp"

namespace zeus::python {

namespace {

struct PipelineFrequency {
    nb::object gpus_owner;  // keeps the GPU alive as long as the optimizer
    std::unique_ptr<perseus::PipelineFrequencyOptimizer> optimizer;
};

}  // namespace

void bind_perseus(nb::module_& m) {
    nb::class_<PipelineFrequency>(m, "PipelineFrequencyOptimizer", "Perseus's client for one rank (native).")
        .def(
            "__init__",
            [](PipelineFrequency* self, nb::object gpus, const DeviceIndex& device_id,
               perseus::PipelineFrequencyOptions options,
               std::function<std::string(std::optional<std::string>)> share) {
                Gpu& gpu = nb::cast<GpuSet&>(gpus).gpu(device_id);
                if (share) {
                    options.share_job_id = [share](std::optional<std::string> id) -> Result<std::string> {
                        AcquiredGil gil;
                        try {
                            return share(std::move(id));
                        } catch (const std::exception& e) {
                            return Error{ErrorCode::Unknown, std::string("sharing the job id failed: ") + e.what(), "", 0};
                        }
                    };
                }
                Result<std::unique_ptr<perseus::PipelineFrequencyOptimizer>> created = Error{};
                {
                    // The schedule waits for every rank: other Python threads (ranks) must run.
                    ReleasedGil released;
                    created = perseus::PipelineFrequencyOptimizer::create(gpu, options);
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
        .def("on_instruction_end",
             [](PipelineFrequency& p, const std::string& name) { p.optimizer->on_instruction_end(name); })
        .def("close", [](PipelineFrequency& p) {
            if (p.optimizer) check(p.optimizer->frequency_controller().end(), ErrorFamily::Runtime);
        });

    nb::class_<perseus::PipelineFrequencyOptions>(m, "PipelineFrequencyOptions")
        .def(nb::init<>())
        .def_rw("server_url", &perseus::PipelineFrequencyOptions::server_url)
        .def_rw("rank", &perseus::PipelineFrequencyOptions::rank)
        .def_rw("dp_rank", &perseus::PipelineFrequencyOptions::dp_rank)
        .def_rw("pp_rank", &perseus::PipelineFrequencyOptions::pp_rank)
        .def_rw("tp_rank", &perseus::PipelineFrequencyOptions::tp_rank)
        .def_rw("dp_degree", &perseus::PipelineFrequencyOptions::dp_degree)
        .def_rw("pp_degree", &perseus::PipelineFrequencyOptions::pp_degree)
        .def_rw("tp_degree", &perseus::PipelineFrequencyOptions::tp_degree)
        .def_rw("world_size", &perseus::PipelineFrequencyOptions::world_size)
        .def_rw("job_metadata", &perseus::PipelineFrequencyOptions::job_metadata);
}

}  // namespace zeus::python
