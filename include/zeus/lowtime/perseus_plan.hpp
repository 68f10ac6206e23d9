// Perseus's optimization step (the original's run_optimization.py): turn an
// instruction profile into per-(stage, instruction) execution options in
// effective energy, fit their cost models, build the 1F1B DAG and solve for
// the whole iteration-time / energy frontier, with each point's per-stage
// frequency schedule.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zeus/lowtime/cost_model.hpp"
#include "zeus/lowtime/instruction_profile.hpp"
#include "zeus/lowtime/pipeline.hpp"
#include "zeus/lowtime/solver.hpp"

namespace zeus::lowtime {

using StageInstruction = std::pair<std::size_t, InstructionKind>;

struct PerseusOptions {
    std::size_t microbatches = 0;
    double unit_time = 0.001;    // s per quantum
    double p2p_power = 70.0;     // W drawn while blocked on P2P communication
    double noise_factor = 0.95;  // second Pareto pass when <= 3 options survive
    // Fitted coefficients to use instead of fitting (e.g. the original's own
    // scipy fits, for point-by-point parity).
    std::map<StageInstruction, ExponentialCoefficients> cost_model_overrides;
    // Refuse (before building anything) a pipeline whose solve would need
    // more than this many bytes by estimated_solve_bytes(); 0: no limit.
    std::size_t memory_budget_bytes = 0;
    SolverOptions solver;
};

struct StageInstructionModel {
    std::shared_ptr<const OperationSpec> spec;
    ExponentialCoefficients coefficients;
    bool overridden = false;
    // Root mean squared error over the options, and whether it exceeds 10% of
    // their cost range (the model then misjudges which options are worth it).
    double rms_error = 0.0;
    bool poor_fit = false;
};

struct PerseusPlan {
    std::size_t stages = 0;
    PerseusOptions options;
    PipelineDag pipeline;
    std::map<StageInstruction, StageInstructionModel> models;
    Frontier frontier;

    // The frequency each stage runs each of its instructions at, in 1F1B order.
    [[nodiscard]] std::vector<std::vector<std::pair<InstructionKind, Knob>>> schedule_at(std::size_t point) const;
    // Effective energy plus every stage's P2P blocking power over the iteration.
    [[nodiscard]] double energy_with_p2p(std::size_t point) const;
};

// The schedule at `point` as the PFO server's solution file holds it (what
// `zeus perseus solve` writes and `zeus perseus simulate` serves):
// [[["forward", 1740], ["backward", 1710], ...] per stage].
[[nodiscard]] std::string schedule_json(const PerseusPlan& plan, std::size_t point);

// Peak memory of a solve: the DAG, its activity-on-arc form, the critical
// path and min-cut networks grow with the operation count (2 x stages x
// microbatches), measured at ~1.6 kB each (2 stages x 100000 microbatches:
// 626 MB), plus one cost per quantum of each operation's duration range.
[[nodiscard]] double estimated_solve_bytes(std::size_t stages, std::size_t microbatches, std::size_t quanta_per_operation);

// Throws std::invalid_argument naming the (stage, instruction) and the fix
// when an option set is unusable (no option, a cost model that cannot be
// fitted, or a cost that rises as the instruction gets slower).
[[nodiscard]] PerseusPlan plan_pipeline_frequencies(const InstructionProfile& profile, PerseusOptions options);

}  // namespace zeus::lowtime
