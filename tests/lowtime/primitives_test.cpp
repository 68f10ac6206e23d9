#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "zeus/lowtime/execution_option.hpp"
#include "zeus/lowtime/operation_dag.hpp"
#include "zeus/lowtime/pipeline.hpp"
#include "zeus/lowtime/python_floordiv.hpp"

namespace zeus::lowtime {
namespace {

TEST(PyFloordiv, MatchesCPythonWhereFloorOfQuotientDoesNot) {
    // CPython: 0.011 // 0.001 == 10.0, while floor(0.011 / 0.001) == 11.
    EXPECT_EQ(python_floordiv(0.011, 0.001), 10.0);
    EXPECT_EQ(std::floor(0.011 / 0.001), 11.0);
    // optimizers.md §0: of d*0.001 // 0.001 for d = 1..1999, CPython 3.11 gives 968 values != d.
    int differing = 0;
    for (int d = 1; d <= 1999; ++d)
        if (python_floordiv(d * 0.001, 0.001) != d) ++differing;
    EXPECT_EQ(differing, 968);
}

TEST(PyFloordiv, SignsAndZerosFollowPython) {
    EXPECT_EQ(python_floordiv(7.0, 2.0), 3.0);
    EXPECT_EQ(python_floordiv(-7.0, 2.0), -4.0);
    EXPECT_EQ(python_floordiv(7.0, -2.0), -4.0);
    EXPECT_EQ(python_floordiv(-7.0, -2.0), 3.0);
    EXPECT_EQ(python_floordiv(-0.5, 2.0), -1.0);
    EXPECT_TRUE(std::signbit(python_floordiv(0.0, -3.0)));  // 0.0 // -3.0 == -0.0
    EXPECT_THROW((void)python_floordiv(1.0, 0.0), std::domain_error);
}

TEST(PyFloordiv, QuantTimeUsesIt) {
    EXPECT_EQ((ExecutionOption{0.011, 0.001, 1.0, 0}.quant_time()), 10);
    EXPECT_EQ((ExecutionOption{0.012, 0.001, 1.0, 0}.quant_time()), static_cast<int>(python_floordiv(0.012, 0.001)));
}

// lowtime tests/test_operation.py vectors.
TEST(CandidateExecutionOptions, ParetoFilterKnobLookup) {
    CandidateExecutionOptions cand({{123, 1.0, 3.0, 1}, {789, 1.0, 1.0, 3}, {456, 1.0, 2.0, 2}, {234, 1.0, 3.1, 4}});
    ASSERT_EQ(cand.options().size(), 3u);
    EXPECT_EQ(cand.options()[0].quant_time(), 789);
    EXPECT_EQ(cand.options()[1].quant_time(), 456);
    EXPECT_EQ(cand.options()[2].quant_time(), 123);
    for (int q = 20; q < 456; ++q) EXPECT_EQ(cand.knob_for(q), 1) << q;
    for (int q = 456; q < 789; ++q) EXPECT_EQ(cand.knob_for(q), 2) << q;
    for (int q = 789; q < 2000; ++q) EXPECT_EQ(cand.knob_for(q), 3) << q;
}

TEST(CandidateExecutionOptions, DedupesQuantTimeKeepingTheCostliest) {
    // 0.0105 and 0.0109 both quantize to 10 ms: the costlier (closer to its real time) stays.
    CandidateExecutionOptions cand({{0.0105, 0.001, 5.0, 1500}, {0.0109, 0.001, 4.0, 1400}, {0.020, 0.001, 3.0, 1000}});
    ASSERT_EQ(cand.options().size(), 2u);
    EXPECT_EQ(cand.options()[1].knob, 1500);
    EXPECT_EQ(cand.knob_for(10), 1500);
    EXPECT_EQ(cand.knob_for(5), 1500);  // below every option: the fastest
    EXPECT_EQ(cand.knob_for(25), 1000);
}

TEST(CandidateExecutionOptions, NoiseFactorKeepsNearlyDominatedOptions) {
    const std::vector<ExecutionOption> options{{10.0, 1.0, 10.0, 1}, {11.0, 1.0, 10.2, 2}, {12.0, 1.0, 9.0, 3}};
    EXPECT_EQ(CandidateExecutionOptions(options).options().size(), 2u);
    EXPECT_EQ(CandidateExecutionOptions(options, 0.95).options().size(), 3u);
}

TEST(CandidateExecutionOptions, RejectsBadOptionSets) {
    EXPECT_THROW(CandidateExecutionOptions({}), std::invalid_argument);
    EXPECT_THROW(CandidateExecutionOptions({{1.0, 1.0, NAN, 0}}), std::invalid_argument);
    EXPECT_THROW(CandidateExecutionOptions({{1.0, 1.0, 1.0, 0}, {2.0, 0.5, 1.0, 1}}), std::invalid_argument);
    EXPECT_THROW(CandidateExecutionOptions({{0.0, 1.0, 1.0, 0}}), std::invalid_argument);
}

std::string render(const std::vector<Instruction>& order) {
    std::string out;
    for (const auto& i : order)
        out += (out.empty() ? "" : " ") + std::string(i.kind == InstructionKind::kForward ? "F" : "B") + std::to_string(i.microbatch);
    return out;
}

TEST(Synchronous1F1B, OrdersMatchDeepSpeedTrainSchedule) {
    EXPECT_EQ(render(synchronous_1f1b_order(4, 6, 0)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
    EXPECT_EQ(render(synchronous_1f1b_order(4, 6, 3)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
    EXPECT_EQ(render(synchronous_1f1b_order(4, 2, 0)), "F0 F1 B0 B1");  // fewer microbatches than warm-up
    EXPECT_THROW((void)synchronous_1f1b_order(4, 6, 4), std::invalid_argument);
    EXPECT_THROW((void)synchronous_1f1b_order(0, 6, 0), std::invalid_argument);
}

std::shared_ptr<const OperationSpec> unit_spec();

class ConstantCost final : public CostModel {
public:
    [[nodiscard]] double cost(int) const override { return 1.0; }
};

std::shared_ptr<const OperationSpec> unit_spec() {
    return std::make_shared<OperationSpec>(
        OperationSpec{CandidateExecutionOptions({{1.0, 1.0, 2.0, 1}, {2.0, 1.0, 1.0, 2}}), std::make_shared<ConstantCost>()});
}

TEST(Synchronous1F1B, DagAndAoaSizes) {
    for (auto [s, m] : {std::pair<std::size_t, std::size_t>{2, 3}, {4, 6}, {8, 32}}) {
        const auto p = make_synchronous_1f1b_dag(s, m, [](std::size_t, InstructionKind) { return unit_spec(); });
        EXPECT_EQ(p.dag.node_count(), 2 * s * m + 2);
        EXPECT_EQ(p.dag.edge_count(), 4 * s * m - s - 2 * m + 2);
        const auto aoa = to_activity_on_arc(p.dag);
        EXPECT_EQ(aoa.node_count, 2 * p.dag.node_count());
        EXPECT_EQ(aoa.arcs.size(), p.dag.edge_count() + p.dag.node_count());
        EXPECT_EQ(aoa.node_count, 4 * s * m + 4);
        EXPECT_EQ(aoa.arcs.size(), 6 * s * m - s - 2 * m + 4);
    }
}

TEST(OperationDag, RejectsCyclesAndBadEdges) {
    OperationDag dag;
    const auto a = dag.add_operation(unit_spec(), "a");
    const auto b = dag.add_operation(unit_spec(), "b");
    dag.add_dependency(a, b);
    dag.add_dependency(b, a);
    EXPECT_THROW(dag.finalize(), std::invalid_argument);
    OperationDag other;
    const auto c = other.add_operation(unit_spec(), "c");
    EXPECT_THROW(other.add_dependency(c, c), std::invalid_argument);
    EXPECT_THROW(other.add_dependency(c, OperationDag::kSource), std::invalid_argument);
    EXPECT_THROW(other.add_dependency(c, 99), std::invalid_argument);
    EXPECT_THROW(other.add_operation(nullptr), std::invalid_argument);
    OperationDag empty;
    EXPECT_THROW(empty.finalize(), std::invalid_argument);
}

}  // namespace
}  // namespace zeus::lowtime
