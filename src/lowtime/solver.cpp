#include "zeus/lowtime/solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "min_cut.hpp"
#include "zeus/lowtime/python_floordiv.hpp"

namespace zeus::lowtime {

std::string_view to_string(StopReason reason) {
    switch (reason) {
        case StopReason::kReachedMinimum: return "reached_minimum";
        case StopReason::kNoSpeedUpEdge: return "no_speed_up_edge";
        case StopReason::kFlatCost: return "flat_cost";
        case StopReason::kInfeasibleFlow: return "infeasible_flow";
        case StopReason::kIterationLimit: return "iteration_limit";
    }
    return "unknown";
}

std::vector<int> Frontier::durations_at(std::size_t point) const {
    if (point >= points_.size()) throw std::out_of_range("frontier point out of range");
    std::vector<int> durations = start_durations_;
    for (std::size_t i = 0; i < point; ++i)
        for (const auto& [node, duration] : changes_[i]) durations[node] = duration;
    return durations;
}

std::vector<Knob> Frontier::knobs_at(const OperationDag& dag, std::size_t point) const {
    const auto durations = durations_at(point);
    std::vector<Knob> knobs(durations.size(), 0);
    for (std::size_t v = 0; v < durations.size(); ++v)
        if (!dag.is_dummy(v)) knobs[v] = dag.spec(v).options.knob_for(durations[v]);
    return knobs;
}

namespace {

constexpr double kFpError = 1e-6;  // lowtime's FP_ERROR
constexpr double kInfiniteCapacity = 10000.0;  // lowtime's "inf" capacity: a units contract (see docs/perseus.md)

// Cost-model predictions of one operation over [min, max] (lowtime caches
// them with lru_cache; operations of one spec share the model).
struct OperationState {
    bool dummy = true;
    int min_duration = 0;
    int max_duration = 0;
    std::vector<double> costs;
    [[nodiscard]] double cost(int d) const { return costs[static_cast<std::size_t>(d - min_duration)]; }
};

// Critical path method over the AOA arcs, in a fixed topological order.
class CriticalPath {
public:
    explicit CriticalPath(const AoaDag& aoa) : aoa_(aoa), in_(aoa.node_count), out_(aoa.node_count) {
        for (std::size_t i = 0; i < aoa.arcs.size(); ++i) {
            out_[aoa.arcs[i].from].push_back(i);
            in_[aoa.arcs[i].to].push_back(i);
        }
        std::vector<std::size_t> indegree(aoa.node_count);
        for (const auto& arc : aoa.arcs) ++indegree[arc.to];
        std::vector<std::size_t> ready{aoa.source};
        while (!ready.empty()) {
            const std::size_t u = ready.back();
            ready.pop_back();
            order_.push_back(u);
            for (std::size_t i : out_[u])
                if (--indegree[aoa.arcs[i].to] == 0) ready.push_back(aoa.arcs[i].to);
        }
        if (order_.size() != aoa.node_count) throw std::logic_error("AOA graph is not a DAG reachable from its source");
    }

    // Returns the makespan; fills `critical` with the arcs of zero total float.
    int run(const std::vector<int>& arc_duration, std::vector<std::size_t>& critical) {
        earliest_.assign(aoa_.node_count, 0);
        for (std::size_t u : order_)
            for (std::size_t i : in_[u])
                earliest_[u] = std::max(earliest_[u], earliest_[aoa_.arcs[i].from] + arc_duration[i]);
        const int makespan = earliest_[aoa_.sink];
        latest_.assign(aoa_.node_count, std::numeric_limits<int>::max());
        latest_[aoa_.sink] = makespan;
        for (auto it = order_.rbegin(); it != order_.rend(); ++it)
            for (std::size_t i : out_[*it])
                latest_[*it] = std::min(latest_[*it], latest_[aoa_.arcs[i].to] - arc_duration[i]);
        critical.clear();
        for (std::size_t i = 0; i < aoa_.arcs.size(); ++i)
            if (earliest_[aoa_.arcs[i].from] + arc_duration[i] == latest_[aoa_.arcs[i].to]) critical.push_back(i);
        return makespan;
    }

private:
    const AoaDag& aoa_;
    std::vector<std::vector<std::size_t>> in_, out_;
    std::vector<std::size_t> order_;
    std::vector<int> earliest_, latest_;
};

// lowtime's `x // FP_ERROR * FP_ERROR`, counted in FP_ERROR units. Capped at
// 1e12 units (1e6 J per quantum), 100x the "infinite" capacity: a capped lower
// bound is as infeasible as the true one, and no sum of a flow network can
// overflow (a lower bound above 1e10 units is refused before summing, so the
// lower bounds of even 1e8 arcs stay below 1e18).
detail::FlowUnits to_flow_units(double x) {
    constexpr double kCap = 1e12;
    const double units = python_floordiv(x, kFpError);
    return static_cast<detail::FlowUnits>(std::isnan(units) || units > kCap ? kCap : units);
}

// lowtime's annotate_capacities for one critical arc.
detail::BoundedArc bounds_of(const OperationState& op, int d, std::size_t from, std::size_t to) {
    double lb = 0.0, ub = kInfiniteCapacity;
    if (op.dummy || (d == op.min_duration && d == op.max_duration)) {
        // unconstrained
    } else if (d - 1 < op.min_duration) {
        lb = std::abs(op.cost(d) - op.cost(d + 1));
    } else if (d + 1 > op.max_duration) {
        ub = std::abs(op.cost(d - 1) - op.cost(d));
    } else {
        lb = std::abs(op.cost(d) - op.cost(d + 1));
        ub = std::abs(op.cost(d - 1) - op.cost(d)) + kFpError;  // room for nearly linear costs
    }
    return {from, to, to_flow_units(lb), to_flow_units(ub)};
}

std::vector<OperationState> operation_states(const OperationDag& dag) {
    std::vector<OperationState> ops(dag.node_count());
    for (std::size_t v = 0; v < dag.node_count(); ++v) {
        if (dag.is_dummy(v)) continue;
        const auto& spec = dag.spec(v);
        auto& op = ops[v];
        op.dummy = false;
        op.min_duration = spec.options.min_quant_time();
        op.max_duration = spec.options.max_quant_time();
        for (int d = op.min_duration; d <= op.max_duration; ++d) op.costs.push_back(spec.cost_model->cost(d));
    }
    return ops;
}

void sync_arc_durations(const AoaDag& aoa, const std::vector<int>& duration, std::vector<int>& arc_duration) {
    for (std::size_t i = 0; i < aoa.arcs.size(); ++i)
        arc_duration[i] = aoa.arcs[i].operation == AoaArc::kNoOperation ? 0 : duration[aoa.arcs[i].operation];
}

double total_cost(const std::vector<OperationState>& ops, const std::vector<int>& duration) {
    double cost = 0.0;
    for (std::size_t v = 0; v < ops.size(); ++v)
        if (!ops[v].dummy) cost += ops[v].cost(duration[v]);
    return cost;
}

// AOA arcs whose operations one iteration changes.
struct CrossArcs {
    std::vector<std::size_t> speed_up, slow_down;
};

// The critical arcs as a flow network with lowtime's capacities, over dense
// ids for the nodes they touch; its buffers are kept from one iteration to the next.
class CriticalFlowNetwork {
  public:
    CriticalFlowNetwork(const AoaDag& aoa, const std::vector<OperationState>& ops)
        : aoa_(aoa), ops_(ops), local_(aoa.node_count, kNoId) {}

    // The arcs across a minimum cut: S->T are sped up, T->S slowed down
    // (lowtime's reduce_durations); nullopt when no flow meets the lower bounds.
    std::optional<CrossArcs> cut(const std::vector<std::size_t>& critical, const std::vector<int>& arc_duration) {
        build(critical, arc_duration);
        const auto source_side =
            detail::find_min_cut(touched_.size(), bounded_, local_[aoa_.source], local_[aoa_.sink]);
        if (!source_side) return std::nullopt;
        CrossArcs cross;
        for (std::size_t k = 0; k < critical.size(); ++k) {
            const bool from_s = (*source_side)[bounded_[k].from];
            const bool to_s = (*source_side)[bounded_[k].to];
            if (from_s && !to_s) cross.speed_up.push_back(critical[k]);
            if (!from_s && to_s) cross.slow_down.push_back(critical[k]);
        }
        return cross;
    }

  private:
    static constexpr std::size_t kNoId = static_cast<std::size_t>(-1);

    void build(const std::vector<std::size_t>& critical, const std::vector<int>& arc_duration) {
        for (std::size_t u : touched_) local_[u] = kNoId;
        touched_.clear();
        local_id(aoa_.source);
        local_id(aoa_.sink);
        bounded_.clear();
        for (std::size_t i : critical) {
            const auto& arc = aoa_.arcs[i];
            const bool dummy = arc.operation == AoaArc::kNoOperation;
            static const OperationState kDummy{};
            bounded_.push_back(
                bounds_of(dummy ? kDummy : ops_[arc.operation], arc_duration[i], local_id(arc.from), local_id(arc.to)));
        }
    }

    std::size_t local_id(std::size_t u) {
        if (local_[u] == kNoId) {
            local_[u] = touched_.size();
            touched_.push_back(u);
        }
        return local_[u];
    }

    const AoaDag& aoa_;
    const std::vector<OperationState>& ops_;
    std::vector<std::size_t> local_;
    std::vector<std::size_t> touched_;
    std::vector<detail::BoundedArc> bounded_;
};

// The cost change of the cut's moves: each sped-up operation a quantum
// shorter, each slowed-down one a quantum longer; nullopt when one of them is
// already at its limit.
std::optional<double> cost_change_of(const CrossArcs& cross, const AoaDag& aoa, const std::vector<OperationState>& ops,
                                     const std::vector<int>& duration) {
    double cost_change = 0.0;
    for (std::size_t i : cross.speed_up) {
        const std::size_t v = aoa.arcs[i].operation;
        if (v == AoaArc::kNoOperation || duration[v] - 1 < ops[v].min_duration) return std::nullopt;
        cost_change += std::abs(ops[v].cost(duration[v] - 1) - ops[v].cost(duration[v]));
    }
    for (std::size_t i : cross.slow_down) {
        const std::size_t v = aoa.arcs[i].operation;
        if (v == AoaArc::kNoOperation) continue;  // dummies absorb slack
        if (duration[v] + 1 > ops[v].max_duration) return std::nullopt;
        cost_change -= std::abs(ops[v].cost(duration[v]) - ops[v].cost(duration[v] + 1));
    }
    return cost_change;
}

// Makes the cut's moves; `changes` gets (operation, new duration) of each.
void apply_cross_arcs(const CrossArcs& cross, const AoaDag& aoa, std::vector<int>& duration,
                      std::vector<std::pair<std::uint32_t, int>>& changes) {
    changes.clear();
    for (std::size_t i : cross.speed_up) {
        const std::size_t v = aoa.arcs[i].operation;
        changes.emplace_back(static_cast<std::uint32_t>(v), --duration[v]);
    }
    for (std::size_t i : cross.slow_down) {
        const std::size_t v = aoa.arcs[i].operation;
        if (v != AoaArc::kNoOperation) changes.emplace_back(static_cast<std::uint32_t>(v), ++duration[v]);
    }
}

}  // namespace

Frontier solve_frontier(const OperationDag& dag, const SolverOptions& options) {
    if (!dag.finalized()) throw std::invalid_argument("finalize() the DAG before solving it");
    const AoaDag aoa = to_activity_on_arc(dag);
    const std::vector<OperationState> ops = operation_states(dag);
    std::vector<int> duration(dag.node_count(), 0);
    std::vector<int> arc_duration(aoa.arcs.size(), 0);

    Frontier frontier;
    frontier.unit_time_ = dag.spec(2).options.unit_time();
    CriticalPath cpm(aoa);
    std::vector<std::size_t> critical;
    for (std::size_t v = 0; v < ops.size(); ++v) duration[v] = ops[v].min_duration;
    sync_arc_durations(aoa, duration, arc_duration);
    frontier.min_quant_time_ = cpm.run(arc_duration, critical);
    for (std::size_t v = 0; v < ops.size(); ++v) duration[v] = ops[v].max_duration;
    sync_arc_durations(aoa, duration, arc_duration);
    int makespan = cpm.run(arc_duration, critical);
    frontier.start_durations_ = duration;
    if (options.on_start) options.on_start(makespan, frontier.min_quant_time_);
    auto record = [&](std::size_t iteration, double cost_change) {
        FrontierPoint point{iteration, makespan, makespan * frontier.unit_time_, total_cost(ops, duration),
                            cost_change};
        frontier.points_.push_back(point);
        if (options.on_point) options.on_point(point);
    };
    record(0, 0.0);

    CriticalFlowNetwork network(aoa, ops);
    std::vector<std::pair<std::uint32_t, int>> changes;
    for (std::size_t iteration = 1;; ++iteration) {
        if (iteration > options.max_iterations) {
            frontier.stop_reason_ = StopReason::kIterationLimit;
            break;
        }
        const auto cross = network.cut(critical, arc_duration);
        if (!cross) {
            frontier.stop_reason_ = StopReason::kInfeasibleFlow;
            break;
        }
        if (cross->speed_up.empty()) {
            frontier.stop_reason_ = StopReason::kNoSpeedUpEdge;
            break;
        }
        const auto cost_change = cost_change_of(*cross, aoa, ops, duration);
        // lowtime would have changed some durations before noticing; this
        // port stops with the last recorded plan intact.
        if (!cost_change) {
            frontier.stop_reason_ = StopReason::kReachedMinimum;
            break;
        }
        apply_cross_arcs(*cross, aoa, duration, changes);
        if (options.stop_on_flat_cost && std::abs(*cost_change) < kFpError) {
            frontier.stop_reason_ = StopReason::kFlatCost;
            break;
        }
        sync_arc_durations(aoa, duration, arc_duration);
        makespan = cpm.run(arc_duration, critical);
        frontier.changes_.push_back(changes);
        record(iteration, *cost_change);
    }
    return frontier;
}

}  // namespace zeus::lowtime
