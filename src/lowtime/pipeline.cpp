#include "zeus/lowtime/pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zeus::lowtime {

std::vector<Instruction> synchronous_1f1b_order(std::size_t stages, std::size_t microbatches, std::size_t stage) {
    if (stages == 0 || microbatches == 0) throw std::invalid_argument("a pipeline needs at least one stage and one microbatch");
    if (stage >= stages) throw std::invalid_argument("stage " + std::to_string(stage) + " is outside the pipeline");
    const std::size_t warmup = std::min(stages - stage - 1, microbatches);
    std::vector<Instruction> order;
    std::size_t next_forward = 0, next_backward = 0;
    for (; next_forward < warmup; ++next_forward) order.push_back({InstructionKind::kForward, stage, next_forward});
    while (next_forward < microbatches) {
        order.push_back({InstructionKind::kForward, stage, next_forward++});
        order.push_back({InstructionKind::kBackward, stage, next_backward++});
    }
    while (next_backward < microbatches) order.push_back({InstructionKind::kBackward, stage, next_backward++});
    return order;
}

PipelineDag make_synchronous_1f1b_dag(std::size_t stages, std::size_t microbatches, const SpecFor& spec_for) {
    PipelineDag p;
    // node id per (stage, kind, microbatch) for the inter-stage rules
    std::vector<std::vector<std::size_t>> forward(stages, std::vector<std::size_t>(microbatches));
    auto backward = forward;
    for (std::size_t s = 0; s < stages; ++s) {
        p.orders.push_back(synchronous_1f1b_order(stages, microbatches, s));
        p.nodes.emplace_back();
        const auto forward_spec = spec_for(s, InstructionKind::kForward);
        const auto backward_spec = spec_for(s, InstructionKind::kBackward);
        for (const auto& instruction : p.orders.back()) {
            const bool is_forward = instruction.kind == InstructionKind::kForward;
            const std::string name = std::string(is_forward ? "F" : "B") + "(" + std::to_string(s) + "," +
                                     std::to_string(instruction.microbatch) + ")";
            const std::size_t id = p.dag.add_operation(is_forward ? forward_spec : backward_spec, name);
            (is_forward ? forward : backward)[s][instruction.microbatch] = id;
            if (!p.nodes.back().empty()) p.dag.add_dependency(p.nodes.back().back(), id);
            p.nodes.back().push_back(id);
        }
    }
    for (std::size_t s = 0; s + 1 < stages; ++s) {
        for (std::size_t m = 0; m < microbatches; ++m) {
            p.dag.add_dependency(forward[s][m], forward[s + 1][m]);
            p.dag.add_dependency(backward[s + 1][m], backward[s][m]);
        }
    }
    p.dag.finalize();
    return p;
}

}  // namespace zeus::lowtime
