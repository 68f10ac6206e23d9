// Whole frontiers against brute force: on convex instances Phillips-Dessouky
// must reach min{sum c_i(d_i) : makespan <= T} at every T from T_max - 1 down
// to T_min (optimizers.md §6.4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include <fstream>
#include <sstream>

#include "min_cut.hpp"
#include "zeus/lowtime/perseus_plan.hpp"
#include "zeus/lowtime/pipeline.hpp"
#include "zeus/lowtime/solver.hpp"
#include "support/build_paths.hpp"

namespace zeus::lowtime {
namespace {

class FunctionCost final : public CostModel {
public:
    explicit FunctionCost(std::function<double(int)> f) : f_(std::move(f)) {}
    [[nodiscard]] double cost(int quant_time) const override { return f_(quant_time); }

private:
    std::function<double(int)> f_;
};

// Options at every integer duration (unit_time 1.0, real_time d: no quantisation
// trap), knob 1000 + d, and the exact cost function as the model.
std::shared_ptr<const OperationSpec> exact_spec(int min_d, int max_d, std::function<double(int)> cost) {
    std::vector<ExecutionOption> options;
    for (int d = min_d; d <= max_d; ++d) options.push_back({static_cast<double>(d), 1.0, cost(d), 1000 + d});
    return std::make_shared<OperationSpec>(
        OperationSpec{CandidateExecutionOptions(options), std::make_shared<FunctionCost>(std::move(cost))});
}

int makespan_of(const OperationDag& dag, const std::vector<int>& duration) {
    // Longest path; finalize() guarantees a DAG, so relax |V| times.
    std::vector<int> finish(dag.node_count(), 0);
    for (std::size_t round = 0; round < dag.node_count(); ++round) {
        bool changed = false;
        for (std::size_t v = 0; v < dag.node_count(); ++v) {
            int start = 0;
            for (const auto& [u, w] : dag.edges())
                if (w == v) start = std::max(start, finish[u]);
            const int f = start + duration[v];
            if (f != finish[v]) {
                finish[v] = f;
                changed = true;
            }
        }
        if (!changed) break;
    }
    return finish[OperationDag::kSink];
}

double cost_of(const OperationDag& dag, const std::vector<int>& duration) {
    double total = 0.0;
    for (std::size_t v = 0; v < dag.node_count(); ++v)
        if (!dag.is_dummy(v)) total += dag.spec(v).cost_model->cost(duration[v]);
    return total;
}

// min cost at each makespan bound T, by enumerating every duration vector.
std::map<int, double> brute_force(const OperationDag& dag) {
    std::vector<std::size_t> ops;
    for (std::size_t v = 0; v < dag.node_count(); ++v)
        if (!dag.is_dummy(v)) ops.push_back(v);
    // Topological order for a fast makespan.
    std::vector<std::vector<std::size_t>> preds(dag.node_count());
    std::vector<std::size_t> indeg(dag.node_count(), 0);
    std::vector<std::vector<std::size_t>> succ(dag.node_count());
    for (const auto& [u, v] : dag.edges()) {
        preds[v].push_back(u);
        succ[u].push_back(v);
        ++indeg[v];
    }
    std::vector<std::size_t> order, ready{OperationDag::kSource};
    while (!ready.empty()) {
        const auto u = ready.back();
        ready.pop_back();
        order.push_back(u);
        for (auto v : succ[u])
            if (--indeg[v] == 0) ready.push_back(v);
    }
    std::map<int, double> best_at;  // exact makespan -> min cost
    std::vector<int> duration(dag.node_count(), 0);
    for (auto v : ops) duration[v] = dag.spec(v).options.min_quant_time();
    std::vector<int> finish(dag.node_count());
    while (true) {
        for (auto v : order) {
            int start = 0;
            for (auto u : preds[v]) start = std::max(start, finish[u]);
            finish[v] = start + duration[v];
        }
        const int t = finish[OperationDag::kSink];
        const double c = cost_of(dag, duration);
        auto [it, inserted] = best_at.emplace(t, c);
        if (!inserted) it->second = std::min(it->second, c);
        std::size_t k = 0;
        for (; k < ops.size(); ++k) {
            const auto v = ops[k];
            if (duration[v] < dag.spec(v).options.max_quant_time()) {
                ++duration[v];
                break;
            }
            duration[v] = dag.spec(v).options.min_quant_time();
        }
        if (k == ops.size()) break;
    }
    std::map<int, double> bound;  // makespan <= T
    double running = std::numeric_limits<double>::infinity();
    for (const auto& [t, c] : best_at) {
        running = std::min(running, c);
        bound[t] = running;
    }
    return bound;
}

// Every point is the brute-force optimum; the run goes down one quantum at a
// time to T_min; each point's plan has that makespan and cost and its knobs.
void expect_matches_brute_force(const OperationDag& dag) {
    const auto bound = brute_force(dag);
    const Frontier frontier = solve_frontier(dag);
    const auto& points = frontier.points();
    ASSERT_FALSE(points.empty());
    const int t_max = points.front().quant_time;
    EXPECT_EQ(frontier.min_quant_time(), bound.begin()->first);
    EXPECT_EQ(points.back().quant_time, frontier.min_quant_time()) << "stopped early: " << to_string(frontier.stop_reason());
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        EXPECT_EQ(p.iteration, i);
        EXPECT_EQ(p.quant_time, t_max - static_cast<int>(i));
        EXPECT_DOUBLE_EQ(p.real_time, p.quant_time * 1.0);
        const auto durations = frontier.durations_at(i);
        EXPECT_EQ(makespan_of(dag, durations), p.quant_time);
        EXPECT_NEAR(cost_of(dag, durations), p.cost, 1e-9 * std::abs(p.cost));
        if (i > 0) {
            EXPECT_NEAR(p.cost - points[i - 1].cost, p.cost_change, 1e-9 * std::abs(p.cost));
            EXPECT_NEAR(p.cost, bound.at(p.quant_time), 1e-9 * std::abs(p.cost)) << "T=" << p.quant_time;
        }
        const auto knobs = frontier.knobs_at(dag, i);
        for (std::size_t v = 0; v < dag.node_count(); ++v)
            EXPECT_EQ(knobs[v], dag.is_dummy(v) ? 0 : 1000 + durations[v]);
    }
}

TEST(Frontier, DiamondMatchesBruteForce) {
    OperationDag dag;
    const auto a = dag.add_operation(exact_spec(2, 5, [](int d) { return 1.0 + 12.0 / d; }), "A");
    const auto b = dag.add_operation(exact_spec(1, 4, [](int d) { return 2.0 + 6.0 / d; }), "B");
    const auto c = dag.add_operation(exact_spec(3, 6, [](int d) { return 3.0 + 30.0 / d; }), "C");
    dag.add_dependency(a, c);
    dag.add_dependency(b, c);
    dag.finalize();
    expect_matches_brute_force(dag);
    // optimizers.md §6.4: start T_max = 11 at cost 14.9; six yields down to T = 5 at 25.0.
    const auto frontier = solve_frontier(dag);
    ASSERT_EQ(frontier.points().size(), 7u);
    EXPECT_EQ(frontier.points().front().quant_time, 11);
    EXPECT_NEAR(frontier.points().front().cost, 14.9, 1e-12);
    EXPECT_NEAR(frontier.points().back().cost, 25.0, 1e-12);
    EXPECT_EQ(frontier.stop_reason(), StopReason::kReachedMinimum);
}

PipelineDag small_pipeline() {
    return make_synchronous_1f1b_dag(2, 3, [](std::size_t stage, InstructionKind kind) {
        const bool f = kind == InstructionKind::kForward;
        if (stage == 0)
            return f ? exact_spec(3, 5, [](int d) { return 2.0 + 30.0 / d; }) : exact_spec(6, 8, [](int d) { return 4.0 + 60.0 / d; });
        return f ? exact_spec(4, 6, [](int d) { return 2.0 + 40.0 / d; }) : exact_spec(8, 10, [](int d) { return 4.0 + 80.0 / d; });
    });
}

TEST(Frontier, PipelineTwoStagesThreeMicrobatchesMatchesBruteForce) {
    const auto p = small_pipeline();
    expect_matches_brute_force(p.dag);
    // optimizers.md §6.4: T 61 -> 45, 16 yields, 144.071429 at T_min (all-fastest costs 156.0).
    const auto frontier = solve_frontier(p.dag);
    ASSERT_EQ(frontier.points().size(), 17u);
    EXPECT_EQ(frontier.points().front().quant_time, 61);
    EXPECT_NEAR(frontier.points().front().cost, 120.5, 1e-9);
    EXPECT_NEAR(frontier.points().back().cost, 144.071429, 1e-6);
}

TEST(Frontier, RandomConvexDagsMatchBruteForce) {
    std::mt19937 rng(20261125);
    for (int instance = 0; instance < 150; ++instance) {
        SCOPED_TRACE(instance);
        OperationDag dag;
        const int n = std::uniform_int_distribution<int>(3, 6)(rng);
        std::vector<std::size_t> ids;
        for (int k = 0; k < n; ++k) {
            const int lo = std::uniform_int_distribution<int>(1, 4)(rng);
            const int hi = lo + std::uniform_int_distribution<int>(0, 3)(rng);
            const double a = std::uniform_real_distribution<double>(0.0, 5.0)(rng);
            const double b = std::uniform_real_distribution<double>(1.0, 40.0)(rng);
            const double q = std::uniform_real_distribution<double>(0.0, 2.0)(rng);
            ids.push_back(dag.add_operation(exact_spec(lo, hi, [=](int d) { return a + b / d + q * (hi - d) * (hi - d); })));
        }
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
                if (std::bernoulli_distribution(0.4)(rng)) dag.add_dependency(ids[i], ids[j]);
        dag.finalize();
        expect_matches_brute_force(dag);
        if (HasFailure()) break;
    }
}

TEST(Frontier, FlatCostStopsLikeLowtimeUnlessAskedToContinue) {
    // A chain whose second operation costs the same at every duration: the
    // cut shortens it for free, |cost change| < 1e-6, and lowtime stops there.
    OperationDag dag;
    const auto a = dag.add_operation(exact_spec(2, 4, [](int d) { return 10.0 / d; }));
    const auto b = dag.add_operation(exact_spec(2, 4, [](int) { return 7.0; }));
    dag.add_dependency(a, b);
    dag.finalize();
    const auto stopped = solve_frontier(dag);
    EXPECT_EQ(stopped.stop_reason(), StopReason::kFlatCost);
    EXPECT_EQ(stopped.points().size(), 1u);
    SolverOptions go_on;
    go_on.stop_on_flat_cost = false;
    const auto full = solve_frontier(dag, go_on);
    EXPECT_EQ(full.points().back().quant_time, 4);
    EXPECT_EQ(full.points().back().quant_time, full.min_quant_time());
    const auto bound = brute_force(dag);
    for (const auto& p : full.points()) EXPECT_NEAR(p.cost, bound.at(p.quant_time), 1e-9);
}

TEST(Frontier, IterationLimitAndCallback) {
    const auto p = small_pipeline();
    SolverOptions options;
    options.max_iterations = 3;
    std::vector<int> seen;
    options.on_point = [&](const FrontierPoint& point) { seen.push_back(point.quant_time); };
    const auto frontier = solve_frontier(p.dag, options);
    EXPECT_EQ(frontier.stop_reason(), StopReason::kIterationLimit);
    EXPECT_EQ(seen, (std::vector<int>{61, 60, 59, 58}));
}

TEST(MinCut, InfeasibleLowerBoundsAreReportedNotGuessed) {
    // 0 -> 1 must carry at least 5 but 1 -> 2 takes at most 3.
    EXPECT_FALSE(detail::find_min_cut(3, {{0, 1, 5, 10}, {1, 2, 0, 3}}, 0, 2).has_value());
    // Feasible: the cut is the cheaper arc's head side.
    const auto cut = detail::find_min_cut(3, {{0, 1, 0, 10}, {1, 2, 0, 3}}, 0, 2);
    ASSERT_TRUE(cut.has_value());
    EXPECT_EQ(*cut, (std::vector<bool>{true, true, false}));
}

// A generated 3-stage, 13-microbatch profile (tests/lowtime/lowtime_parity.py
// --random 51) with fitted coefficients on which the floating-point min cut
// left ~1e-6 of flow on an operation already at its slowest option, cut it,
// and stopped as "reached_minimum" 104 quanta above the fastest schedule.
// Every operation can run at its fastest option, so the frontier must reach
// the all-fastest critical path.
TEST(Frontier, MinCutIgnoresFloatingPointResidueAndReachesTheFastestSchedule) {
    const std::string dir = zeus::testing::lowtime_test_data_dir();
    std::ifstream csv(dir + "/early_stop_3x13.csv");
    ASSERT_TRUE(csv) << dir;
    const auto profile = read_instruction_profile(csv, "early_stop_3x13.csv");
    PerseusOptions options;
    options.microbatches = 13;
    options.p2p_power = 70.0;
    std::ifstream models(dir + "/early_stop_3x13_models.csv");
    std::string line;
    std::getline(models, line);
    while (std::getline(models, line)) {
        std::istringstream fields(line);
        std::string stage, kind, a, b, c;
        std::getline(fields, stage, ',');
        std::getline(fields, kind, ',');
        std::getline(fields, a, ',');
        std::getline(fields, b, ',');
        std::getline(fields, c, ',');
        options.cost_model_overrides[{std::stoul(stage), kind == "forward" ? InstructionKind::kForward : InstructionKind::kBackward}] = {
            std::stod(a), std::stod(b), std::stod(c)};
    }
    ASSERT_EQ(options.cost_model_overrides.size(), 6u);
    const auto plan = plan_pipeline_frequencies(profile, options);
    const auto& points = plan.frontier.points();
    EXPECT_EQ(plan.frontier.stop_reason(), StopReason::kReachedMinimum);
    EXPECT_EQ(points.back().quant_time, plan.frontier.min_quant_time());
    for (std::size_t i = 1; i < points.size(); ++i) EXPECT_EQ(points[i].quant_time, points[i - 1].quant_time - 1);
}

TEST(PerseusPlan, RefusesAPipelineBeyondTheMemoryBudgetBeforeBuildingIt) {
    std::ifstream csv(zeus::testing::lowtime_test_data_dir() + "/early_stop_3x13.csv");
    const auto profile = read_instruction_profile(csv, "early_stop_3x13.csv");
    PerseusOptions options;
    options.microbatches = 1 << 20;
    options.p2p_power = 70.0;
    // 3 stages x 2^20 microbatches are 6.3 million operations: gigabytes.
    options.memory_budget_bytes = std::size_t{1} << 30;
    try {
        (void)plan_pipeline_frequencies(profile, options);
        FAIL() << "a pipeline needing more than 1 GiB was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("3 stages x 1048576 microbatches would need about"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("more than the 1024 MiB available"), std::string::npos) << e.what();
    }
    EXPECT_GT(estimated_solve_bytes(3, 1 << 20, 1), 6.0e9);
}

TEST(Frontier, UnfinalizedDagIsRejected) {
    OperationDag dag;
    dag.add_operation(exact_spec(1, 2, [](int d) { return 1.0 / d; }));
    EXPECT_THROW((void)solve_frontier(dag), std::invalid_argument);
}

}  // namespace
}  // namespace zeus::lowtime
