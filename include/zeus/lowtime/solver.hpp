// The Phillips-Dessouky time-cost trade-off as lowtime runs it: start with
// every operation at its slowest option, then repeatedly shorten the
// makespan by one quantum with a minimum cut (two max-flow phases, flow lower
// bounds) over the critical subgraph, until the cut becomes infinite, the
// bounded flow is infeasible, or the cost stops changing. The result is the
// whole time-cost frontier with the plan (duration and knob of every
// operation) at each point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/lowtime/operation_dag.hpp"

namespace zeus::lowtime {

enum class StopReason {
    kReachedMinimum,     // the cut had to shorten an operation at its fastest option (or a dummy): lowtime's inf
    kNoSpeedUpEdge,      // the cut crossed no arc forward (lowtime returns cost change 0)
    kFlatCost,           // |cost change| < 1e-6 (lowtime stops here; see SolverOptions::stop_on_flat_cost)
    kInfeasibleFlow,     // phase 1 could not saturate the lower bounds (lowtime: LowtimeFlowError / Rust panic)
    kIterationLimit,     // SolverOptions::max_iterations
};
[[nodiscard]] std::string_view to_string(StopReason reason);

struct FrontierPoint {
    std::size_t iteration = 0;  // 0: the start (all slowest); lowtime's yields are 1..n
    int quant_time = 0;         // makespan in quanta
    double real_time = 0.0;     // quant_time * unit_time
    double cost = 0.0;          // sum of cost-model predictions over all operations
    double cost_change = 0.0;   // the cut's cost change that led here (0 at the start)
};

struct SolverOptions {
    // lowtime stops the whole run when one iteration changes the cost by less
    // than 1e-6 (e.g. a flat cost model), even though the makespan did shrink.
    // true reproduces it; false records that point and goes on.
    bool stop_on_flat_cost = true;
    std::size_t max_iterations = static_cast<std::size_t>(-1);
    // Called once before the first point with the starting (all slowest) and
    // the all-fastest makespans in quanta: the frontier lies between them.
    std::function<void(int start_quant_time, int min_quant_time)> on_start;
    // Called after every recorded point (progress, per-iteration exports).
    std::function<void(const FrontierPoint&)> on_point;
};

class Frontier {
public:
    [[nodiscard]] const std::vector<FrontierPoint>& points() const { return points_; }
    [[nodiscard]] StopReason stop_reason() const { return stop_reason_; }
    [[nodiscard]] double unit_time() const { return unit_time_; }
    [[nodiscard]] int min_quant_time() const { return min_quant_time_; }  // all fastest (CPM)
    // Duration (quanta) of every AON node at point i; dummies 0.
    [[nodiscard]] std::vector<int> durations_at(std::size_t point) const;
    // Knob of every AON node at point i (knob_for(duration)); dummies 0.
    [[nodiscard]] std::vector<Knob> knobs_at(const OperationDag& dag, std::size_t point) const;

private:
    friend Frontier solve_frontier(const OperationDag&, const SolverOptions&);
    std::vector<FrontierPoint> points_;
    std::vector<int> start_durations_;
    // changes_[i]: (node, new duration) applied to reach point i+1 from point i
    std::vector<std::vector<std::pair<std::uint32_t, int>>> changes_;
    StopReason stop_reason_ = StopReason::kReachedMinimum;
    double unit_time_ = 0.0;
    int min_quant_time_ = 0;
};

// Requires a finalized DAG. Throws std::invalid_argument if it is not.
[[nodiscard]] Frontier solve_frontier(const OperationDag& dag, const SolverOptions& options = {});

}  // namespace zeus::lowtime
