// The batch-size optimizer's decisions against optimizers.md §6.2: the
// original's pruning scenarios (tests/optimizer/batch_size/test_explorer.py),
// the report() truth table, the arm-fit numbers and RNG properties. Expected
// values come from the formulas in the test, never from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include "zeus/bso/algorithm.hpp"

namespace zeus::bso {
namespace {

constexpr double kMaxPower = 3000.0;

JobSpec job_with_default(std::int64_t default_bs) {
    JobSpec job;
    job.job_id = "test-job";
    job.job_id_prefix = "test";
    job.batch_sizes = {8, 16, 32, 64, 128, 256};
    job.default_batch_size = default_bs;
    job.beta_knob = std::nullopt;
    job.max_power = kMaxPower;
    job.number_of_gpus = 4;
    job.gpu_model = "A100";
    return job;
}

// (batch size, cost, converged) per dispatched exploration, then the arms.
using Exploration = std::tuple<std::int64_t, double, bool>;

void replay_pruning(std::int64_t default_bs, const std::vector<Exploration>& steps, const std::vector<std::int64_t>& arms) {
    const JobSpec job = job_with_default(default_bs);
    std::map<std::int64_t, std::vector<Trial>> explorations;
    std::int64_t number = 0;
    for (const auto& [bs, cost, converged] : steps) {
        const auto step = next_pruning_step(job, explorations);
        ASSERT_EQ(step.kind, PruningStep::Kind::Explore) << "expected to explore " << bs;
        ASSERT_EQ(step.batch_size, bs);
        Trial trial;
        trial.trial_number = ++number;
        trial.batch_size = bs;
        trial.status = TrialStatus::Succeeded;
        trial.energy = 1.0;
        trial.time = (2 * cost - 1.0) / kMaxPower;  // eta 0.5: cost = 0.5 E + 0.5 P T
        trial.converged = converged;
        ASSERT_NEAR(zeus_cost(*trial.energy, *trial.time, job.eta_knob, job.max_power), cost, 1e-9);
        explorations[bs].push_back(trial);
    }
    const auto final_step = next_pruning_step(job, explorations);
    ASSERT_EQ(final_step.kind, PruningStep::Kind::Mab);
    EXPECT_EQ(final_step.arms, arms);
}

TEST(BsoPruning, DefaultInTheMiddle) {
    replay_pruning(128,
                   {{128, 10.0, true}, {64, 9.0, true}, {32, 8.0, true}, {16, 12.0, true}, {8, 21.0, false}, {256, 15.0, true},
                    {32, 8.0, true}, {16, 12.0, false}, {64, 9.0, true}, {128, 10.0, true}, {256, 17.0, false}},
                   {32, 64, 128});
}

TEST(BsoPruning, DefaultIsLargest) {
    replay_pruning(256,
                   {{256, 7.0, true}, {128, 8.0, true}, {64, 9.0, true}, {32, 13.0, true}, {16, 22.0, false},
                    {256, 8.0, true}, {128, 8.5, true}, {64, 9.0, true}, {32, 12.0, true}},
                   {32, 64, 128, 256});
}

TEST(BsoPruning, DefaultIsSmallest) {
    replay_pruning(8, {{8, 10.0, true}, {16, 17.0, true}, {32, 20.0, true}, {64, 25.0, false}, {8, 10.0, true}, {16, 21.0, false}},
                   {8});
}

TEST(BsoPruning, AllConverge) {
    replay_pruning(64,
                   {{64, 10.0, true}, {32, 8.0, true}, {16, 12.0, true}, {8, 15.0, true}, {128, 12.0, true}, {256, 13.0, true},
                    {32, 7.0, true}, {16, 10.0, true}, {8, 15.0, true}, {64, 10.0, true}, {128, 12.0, true}, {256, 13.0, true}},
                   {8, 16, 32, 64, 128, 256});
}

TEST(BsoPruning, OnlyTheDefaultConverges) {
    replay_pruning(64, {{64, 10.0, true}, {32, 22.0, false}, {128, 25.0, false}, {64, 9.0, true}}, {64});
}

TEST(BsoPruning, DispatchedExplorationGivesAConcurrentTrial) {
    const JobSpec job = job_with_default(128);
    Trial running;
    running.trial_number = 1;
    running.batch_size = 128;
    std::map<std::int64_t, std::vector<Trial>> explorations{{128, {running}}};
    EXPECT_EQ(next_pruning_step(job, explorations).kind, PruningStep::Kind::Concurrent);
}

TEST(BsoPruning, NoConvergedBatchSizeIsA500) {
    const JobSpec job = job_with_default(64);
    std::map<std::int64_t, std::vector<Trial>> explorations;
    for (std::int64_t bs : {64, 128}) {
        Trial t;
        t.batch_size = bs;
        t.status = TrialStatus::Succeeded;
        t.converged = false;
        t.energy = 1;
        t.time = 1;
        explorations[bs].push_back(t);
    }
    try {
        (void)next_pruning_step(job, explorations);
        FAIL() << "expected a BsoError";
    } catch (const BsoError& e) {
        EXPECT_EQ(e.status(), 500);
    }
}

// (within cost bound, epoch < max, reached) -> (stop, converged).
TEST(BsoReport, TruthTable) {
    for (int within = 0; within < 2; ++within) {
        for (int before_max = 0; before_max < 2; ++before_max) {
            for (int reached = 0; reached < 2; ++reached) {
                for (bool higher_is_better : {true, false}) {
                    JobSpec job = job_with_default(64);
                    job.beta_knob = 2.0;
                    job.higher_is_better_metric = higher_is_better;
                    job.target_metric = 0.5;
                    job.max_epochs = 10;
                    const double min_cost = 100.0;
                    ReportedProgress progress;
                    progress.batch_size = 64;
                    progress.energy = 100.0;
                    // cost = 0.5*100 + 0.5*3000*T; bound = 200: T chosen either side.
                    const double cost = within ? 150.0 : 250.0;
                    progress.time = (cost - 50.0) / (0.5 * kMaxPower);
                    progress.current_epoch = before_max ? 5 : 10;
                    const double good = higher_is_better ? 0.6 : 0.4;
                    const double bad = higher_is_better ? 0.4 : 0.6;
                    progress.metric = reached ? good : bad;
                    const auto d = decide_report(job, min_cost, progress);
                    const bool keep_going = within && before_max && !reached;
                    SCOPED_TRACE(testing::Message() << within << before_max << reached << higher_is_better);
                    EXPECT_EQ(d.stop_train, !keep_going);
                    EXPECT_EQ(d.converged, !keep_going && reached && within);
                    EXPECT_NEAR(d.cost, cost, 1e-9);
                }
            }
        }
    }
}

TEST(BsoReport, MetricEqualToTargetCountsAsReachedBothWays) {
    for (bool higher : {true, false}) {
        JobSpec job = job_with_default(64);
        job.higher_is_better_metric = higher;
        ReportedProgress p{64, 1.0, 1.0, job.target_metric, 1};
        EXPECT_TRUE(decide_report(job, std::nullopt, p).converged);
    }
}

TEST(BsoReport, NoEarlyStopWithoutBetaOrBeforeTheFirstResult) {
    JobSpec job = job_with_default(64);
    ReportedProgress huge{64, 1e9, 1e9, 0.0, 1};
    job.beta_knob = std::nullopt;
    EXPECT_FALSE(decide_report(job, 1.0, huge).stop_train);
    job.beta_knob = 2.0;
    EXPECT_FALSE(decide_report(job, std::nullopt, huge).stop_train);  // min_cost NULL: infinite bound
    const auto stopped = decide_report(job, 1.0, huge);
    EXPECT_TRUE(stopped.stop_train);
    EXPECT_FALSE(stopped.converged);
    // A cost exactly at the bound is still within it (cost_ub >= cost).
    ReportedProgress at_bound{64, 0.0, 2.0 * 10.0 / 0.5, 0.0, 1};  // cost = 0.5 * E = 20
    EXPECT_FALSE(decide_report(job, 10.0, at_bound).stop_train);
}

TEST(BsoArmFit, TwoRewardsFromAFlatPrior) {
    const auto arm = fit_arm(32, 0.0, 0.0, {-100.0, -110.0});
    const double mean = -105.0, var = (25.0 + 25.0) / 2;
    EXPECT_DOUBLE_EQ(arm.reward_precision, 1.0 / var);
    EXPECT_DOUBLE_EQ(arm.param_precision, 2.0 / var);
    EXPECT_DOUBLE_EQ(arm.param_mean, mean);
    EXPECT_NEAR(std::sqrt(1.0 / arm.param_precision), std::sqrt(var / 2.0), 1e-12);
    EXPECT_EQ(arm.num_observations, 2);
}

TEST(BsoArmFit, InformativePrior) {
    const auto arm = fit_arm(32, -50.0, 0.01, {-100.0, -110.0});
    const double reward_prec = 1.0 / 25.0;
    const double prec = 0.01 + 2 * reward_prec;
    EXPECT_NEAR(arm.param_precision, prec, 1e-15);
    EXPECT_NEAR(arm.param_mean, (0.01 * -50.0 + reward_prec * -210.0) / prec, 1e-12);
    EXPECT_NEAR(arm.param_mean, -98.0 - 8.0 / 9.0, 1e-9);  // §6.2: -98.888...
}

TEST(BsoArmFit, OneDistinctRewardIsCertain) {
    for (const auto& rewards : {std::vector<double>{-42.0}, std::vector<double>{-42.0, -42.0}}) {
        const auto arm = fit_arm(8, -50.0, 0.01, rewards);
        EXPECT_TRUE(std::isinf(arm.param_precision));
        EXPECT_TRUE(std::isinf(arm.reward_precision));
        EXPECT_EQ(arm.param_mean, -42.0);
    }
    EXPECT_THROW((void)fit_arm(8, 0, 0, {}), BsoError);
}

TEST(BsoArmFit, WindowKeepsTheNewestAndTheCurrent) {
    // History newest first: costs 110 (new), 100 (old); window 2; new cost 90.
    const auto rewards = windowed_rewards({-110.0, -100.0}, 2, -90.0);
    EXPECT_EQ(rewards, (std::vector<double>{-110.0, -90.0}));
    const auto arm = fit_arm(16, 0.0, 0.0, rewards);
    EXPECT_DOUBLE_EQ(arm.param_precision, 2.0 / 100.0);
    EXPECT_DOUBLE_EQ(arm.param_mean, -100.0);
    // No window: everything is kept.
    EXPECT_EQ(windowed_rewards({-1.0, -2.0, -3.0}, 0, -4.0).size(), 4U);
    // A window not yet full keeps all.
    EXPECT_EQ(windowed_rewards({-1.0}, 3, -4.0).size(), 2U);
}

TEST(BsoRng, SameSeedSameStreamAndStateRoundTrips) {
    auto a = Pcg64::from_seed(1);
    auto b = Pcg64::from_seed(1);
    auto c = Pcg64::from_seed(2);
    EXPECT_EQ(a.next_uint64(), b.next_uint64());
    EXPECT_NE(a.next_uint64(), c.next_uint64());
    (void)a.next_uint32();  // leaves half a draw buffered
    auto restored = Pcg64::from_state_json(a.state_json());
    EXPECT_EQ(restored, a);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(restored.next_uint32(), a.next_uint32());
    EXPECT_THROW((void)Pcg64::from_state_json("{\"bit_generator\": \"MT19937\"}"), std::invalid_argument);
    EXPECT_THROW((void)Pcg64::from_state_json("not json"), std::invalid_argument);
}

TEST(BsoRng, ExplorationOrderIsAUniformPermutation) {
    auto rng = Pcg64::from_seed(7);
    std::map<std::vector<std::size_t>, int> counts;
    const int draws = 60000;
    for (int i = 0; i < draws; ++i) {
        auto p = rng.permutation(3);
        auto sorted = p;
        std::sort(sorted.begin(), sorted.end());
        ASSERT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2}));
        ++counts[p];
    }
    ASSERT_EQ(counts.size(), 6U);
    // Each of 6 orders has p = 1/6; 6 standard deviations of a binomial count.
    const double expected = draws / 6.0, sd = std::sqrt(draws * (1.0 / 6) * (5.0 / 6));
    for (const auto& [order, n] : counts) EXPECT_NEAR(n, expected, 6 * sd);
}

TEST(BsoRng, NormalDrawsMatchTheirDistribution) {
    auto rng = Pcg64::from_seed(11);
    const int n = 100000;
    const double mean = -105.0, prec = 0.08, sd = std::sqrt(1.0 / prec);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) {
        const double x = rng.normal(mean, sd);
        sum += x;
        sq += x * x;
    }
    const double m = sum / n, var = sq / n - m * m;
    EXPECT_NEAR(m, mean, 6 * sd / std::sqrt(n));
    // The sample variance's sd is about var * sqrt(2/n).
    EXPECT_NEAR(var, sd * sd, 6 * sd * sd * std::sqrt(2.0 / n));
}

TEST(BsoRng, TwoArmArgmaxFrequencyMatchesTheClosedForm) {
    // P(X_a > X_b) for independent normals = Phi((mu_a - mu_b) / sqrt(s_a^2 + s_b^2)).
    std::vector<ArmState> arms(2);
    arms[0] = {32, -100.0, 1.0 / 16.0, 0.0, 2};
    arms[1] = {64, -103.0, 1.0 / 9.0, 0.0, 2};
    const double z = (-100.0 + 103.0) / std::sqrt(16.0 + 9.0);
    const double p_first = 0.5 * std::erfc(-z / std::sqrt(2.0));
    auto rng = Pcg64::from_seed(3);
    const int n = 50000;
    int first = 0;
    for (int i = 0; i < n; ++i) first += thompson_predict(arms, 2, rng) == 32 ? 1 : 0;
    EXPECT_NEAR(static_cast<double>(first) / n, p_first, 6 * std::sqrt(p_first * (1 - p_first) / n));
}

TEST(BsoRng, UnexploredArmsComeFirst) {
    std::vector<ArmState> arms(3);
    arms[0] = {8, -1.0, 1.0, 1.0, 2};
    arms[1] = {16, -1000.0, 1.0, 1.0, 1};  // under num_explorations: chosen despite its cost
    arms[2] = {32, -1.0, 1.0, 1.0, 2};
    auto rng = Pcg64::from_seed(5);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(thompson_predict(arms, 2, rng), 16);
}

}  // namespace
}  // namespace zeus::bso
