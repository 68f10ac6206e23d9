// Pipeline-parallel training as an operation DAG (lowtime.perseus): per-stage
// instruction orders and the 1F1B dependency rules.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "zeus/lowtime/operation_dag.hpp"

namespace zeus::lowtime {

enum class InstructionKind { kForward, kBackward };

struct Instruction {
    InstructionKind kind = InstructionKind::kForward;
    std::size_t stage = 0;
    std::size_t microbatch = 0;
    friend bool operator==(const Instruction&, const Instruction&) = default;
};

// Synchronous 1F1B (DeepSpeed's TrainSchedule): stage s runs
// min(S-s-1, M) warm-up forwards, then alternates F/B, then drains the Bs.
// Throws std::invalid_argument for zero stages/microbatches or stage >= S.
[[nodiscard]] std::vector<Instruction> synchronous_1f1b_order(std::size_t stages, std::size_t microbatches,
                                                              std::size_t stage);

struct PipelineDag {
    OperationDag dag;
    // node id of each instruction, [stage][position in synchronous_1f1b_order]
    std::vector<std::vector<std::size_t>> nodes;
    std::vector<std::vector<Instruction>> orders;
};

// The 1F1B AON DAG: each stage's order as a chain, F(s,m) -> F(s+1,m),
// B(s+1,m) -> B(s,m), dummy source/sink; finalized. `spec_for` gives the
// (shared) spec of a stage's forward or backward.
using SpecFor = std::function<std::shared_ptr<const OperationSpec>(std::size_t stage, InstructionKind kind)>;
[[nodiscard]] PipelineDag make_synchronous_1f1b_dag(std::size_t stages, std::size_t microbatches, const SpecFor& spec_for);

}  // namespace zeus::lowtime
