// Perseus's client (the original's PipelineFrequencyOptimizer and
// FrequencyController, zeus/optimizer/pipeline_frequency/): each rank fetches
// its per-iteration (instruction, SM clock) schedule from a PFO server
// (`zeus perseus-server`, or the original) and locks its GPU's clock at every
// instruction boundary.
//
//   auto pfo = PipelineFrequencyOptimizer::create(gpus[device], options).value();
//   for (;;) {                                   // one training step
//       pfo->on_step_begin();
//       for (auto& instruction : one_f_one_b) {  // "forward" / "backward"
//           pfo->on_instruction_begin(instruction.name).value();
//           run(instruction);
//           pfo->on_instruction_end(instruction.name);
//       }
//       pfo->on_step_end().value();              // the schedule must be used up
//   }
//
// The GPU's clocks come back to the driver when the optimizer is destroyed.
// Differences from the original: clocks are set on the calling thread (no
// helper process; a set that fails is an error the caller sees), and the job
// id reaches the other ranks through `share_job_id` rather than
// torch.distributed.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/device/gpu.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::perseus {

// Locks one GPU's SM clock to each requested frequency, skipping a request
// for the clock already set, and 0 (the original's "leave it"). At start:
// the default power limit, memory clock locked to its maximum (where
// supported), SM clock locked to its maximum. At the end: every lock reset.
class FrequencyController {
  public:
    static Result<std::unique_ptr<FrequencyController>> create(Gpu& gpu);
    ~FrequencyController();
    FrequencyController(const FrequencyController&) = delete;
    FrequencyController& operator=(const FrequencyController&) = delete;

    Status set_frequency(long long mhz);
    // Resets the locks now (the destructor does it otherwise); idempotent.
    Status end();
    // How many times the clock was actually changed (tests, logs).
    [[nodiscard]] std::size_t changes() const { return changes_; }
    [[nodiscard]] long long current() const { return current_; }

  private:
    explicit FrequencyController(Gpu& gpu) : gpu_(gpu) {}
    Gpu& gpu_;
    long long current_ = 0;
    std::size_t changes_ = 0;
    bool ended_ = false;
};

struct PipelineFrequencyOptions {
    std::string server_url;  // "http://127.0.0.1:8000"
    std::size_t rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
    std::size_t dp_degree = 1, pp_degree = 1, tp_degree = 1, world_size = 1;
    std::optional<std::string> job_metadata;
    // Called on every rank with rank 0's job id (nullopt elsewhere); returns
    // the job id on every rank (a broadcast from rank 0). Unset: only a
    // world of one rank works.
    std::function<Result<std::string>(std::optional<std::string>)> share_job_id;
};

using InstructionSchedule = std::vector<std::pair<std::string, long long>>;

class PipelineFrequencyOptimizer {
  public:
    // Registers the job (rank 0) and the rank, starts the frequency
    // controller and waits, without a time limit as the original, for the
    // schedule: the server answers once every rank has asked.
    static Result<std::unique_ptr<PipelineFrequencyOptimizer>> create(Gpu& gpu, const PipelineFrequencyOptions& options);

    void on_step_begin() {}
    // Error when the step left instructions of the schedule unused.
    Status on_step_end();
    // Error when the schedule has no instruction left or expects another one.
    Status on_instruction_begin(const std::string& name);
    void on_instruction_end(const std::string& /*name*/) {}

    [[nodiscard]] const std::string& job_id() const { return job_id_; }
    [[nodiscard]] const InstructionSchedule& schedule() const { return schedule_; }
    [[nodiscard]] FrequencyController& frequency_controller() { return *controller_; }

  private:
    PipelineFrequencyOptimizer() = default;
    std::string job_id_;
    InstructionSchedule schedule_;
    std::size_t next_ = 0;
    std::unique_ptr<FrequencyController> controller_;
};

}  // namespace zeus::perseus
