// What the optimizer chooses once profiling is done, over fake GPUs: a saved
// profile instead of profiling, the report against the maximum limit,
// user-defined selectors, and several ranks profiling together.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimizer/optimizer_schedule_fixture.hpp"
#include "zeus/optimizer/power_limit_profile.hpp"

namespace zeus::optimizer {
namespace {

TEST_F(OptimizerSchedule, ASavedProfileSkipsProfilingAndServesAnySelector) {
    open(1);
    const auto path = dir_ / "profiles" / "model.json";
    PowerLimitOptimizerOptions options;
    options.profile_path = path;
    options.warmup_steps = 2;
    options.profile_steps = 10;
    auto first = create(options);
    ASSERT_TRUE(first);
    EXPECT_FALSE(std::filesystem::exists(path));
    training().run_to_done(*first);
    ASSERT_TRUE(std::filesystem::exists(path));
    const auto saved = load_power_limit_profile(path).value();
    ASSERT_EQ(saved.measurements.size(), first->measurements().size());
    EXPECT_EQ(saved.profile_steps, 10U);
    first.reset();

    for (const SelectorPtr& selector : standard_selectors()) {
        const auto begun = monitor_->edges().size();
        options.selector = selector;
        auto second = create(options);
        ASSERT_TRUE(second);
        EXPECT_TRUE(second->done());
        const auto expected = selector->select(saved.measurements, SelectionContext{1}).value();
        EXPECT_EQ(second->optimal_power_limit(), expected) << selector->name();
        EXPECT_EQ(gpus_[0].power_limit().value(), expected) << selector->name();
        EXPECT_EQ(monitor_->edges().size(), begun);  // nothing measured
        const auto report = second->report().value();
        EXPECT_EQ(report.profile_steps, 10U);
        EXPECT_EQ(report.choices.front().selector, selector->name());
    }
}

TEST_F(OptimizerSchedule, TheReportComparesSelectorsAgainstTheMaximumLimit) {
    open(1);
    PowerLimitOptimizerOptions options;
    options.warmup_steps = 1;
    options.profile_steps = 8;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    EXPECT_FALSE(optimizer->report().ok());  // nothing measured yet
    training().run_to_done(*optimizer);
    const auto report = optimizer->report(standard_selectors()).value();
    const auto& ms = optimizer->measurements();
    ASSERT_EQ(report.rows.size(), ms.size());
    EXPECT_EQ(report.choices.size(), 4U);  // zeus-cost once: it is in use and in the standard set
    EXPECT_TRUE(report.choices.front().in_use);
    for (std::size_t k = 0; k < ms.size(); ++k) {
        EXPECT_DOUBLE_EQ(report.rows[k].time_per_step->count(), ms[k].time.count() / 8);
        EXPECT_DOUBLE_EQ(report.rows[k].energy_per_step->count(), ms[k].energy.count() / 8);
    }
    for (const auto& choice : report.choices) {
        const auto& at =
            *std::find_if(ms.begin(), ms.end(), [&](auto& m) { return m.power_limit == choice.power_limit; });
        EXPECT_DOUBLE_EQ(choice.energy_saving, 1 - at.energy.count() / ms.front().energy.count()) << choice.selector;
        EXPECT_DOUBLE_EQ(choice.slowdown, at.time.count() / ms.front().time.count() - 1) << choice.selector;
    }
    const std::string text = report.to_string();
    for (const auto& m : ms) {
        EXPECT_NE(text.find(std::to_string(m.power_limit.count() / 1000) + " W"), std::string::npos) << text;
    }
    const auto json = nlohmann::json::parse(report.to_json());
    EXPECT_EQ(json["measurements"].size(), ms.size());
    EXPECT_EQ(json["choices"][0]["selector"], "zeus-cost:eta=0.5");
}

// A user-defined rule: the lowest limit within 2% of the least energy.
class NearlyLeastEnergy final : public OptimumSelector {
  public:
    [[nodiscard]] std::string name() const override { return "nearly-least-energy"; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> ms,
                                            const SelectionContext&) const override {
        double least = INFINITY;
        for (const auto& m : ms) least = std::min(least, m.energy.count());
        Milliwatts pick = ms.front().power_limit;
        for (const auto& m : ms) {
            if (m.energy.count() <= 1.02 * least) pick = std::min(pick, m.power_limit);
        }
        return pick;
    }
};

TEST_F(OptimizerSchedule, UserDefinedSelectorsPlugIn) {
    open(1);
    PowerLimitOptimizerOptions options;
    options.selector = std::make_shared<NearlyLeastEnergy>();
    options.warmup_steps = 1;
    options.profile_steps = 4;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    training().run_to_done(*optimizer);
    EXPECT_EQ(optimizer->optimal_power_limit(), NearlyLeastEnergy().select(optimizer->measurements(), {}).value());
    EXPECT_EQ(optimizer->report().value().choices.front().selector, "nearly-least-energy");
}

// Rank 1 of 2 whose partner measured exactly what it did.
class MirroredRank final : public profile::Communicator {
  public:
    [[nodiscard]] int rank() const override { return 1; }
    [[nodiscard]] int size() const override { return 2; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, profile::ReduceOp op) override {
        if (op == profile::ReduceOp::Sum) {
            for (double& v : values) v *= 2;
        }
        return values;
    }
};

TEST_F(OptimizerSchedule, RanksSumEnergyTakeTheSlowestTimeAndCountEveryGpu) {
    open(1);
    MirroredRank ranks;
    PowerLimitOptimizerOptions options;
    options.communicator = &ranks;
    options.warmup_steps = 3;
    options.profile_steps = 6;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    EXPECT_EQ(optimizer->world_size(), 2);
    training().run_to_done(*optimizer);
    const auto candidates = every_25w_from(300, 100);
    ASSERT_EQ(events("begin").size(), candidates.size());
    ASSERT_EQ(optimizer->measurements().size(), candidates.size());
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        // This rank's window by the script: 6 steps of its one GPU at the limit.
        const double seconds = 6 * step_time(watts(candidates[k]));
        const double local = step_power(watts(candidates[k])) * seconds;
        EXPECT_EQ(optimizer->measurements()[k].power_limit, candidates[k]);
        EXPECT_NEAR(optimizer->measurements()[k].energy.count(), 2 * local, 0.004) << k;
        // The partner took as long, so the slowest time is this rank's.
        EXPECT_NEAR(optimizer->measurements()[k].time.count(), seconds, 1e-6 * seconds) << k;
    }
    EXPECT_EQ(optimizer->optimal_power_limit(),
              zeus_cost(0.5, 2).value()->select(optimizer->measurements(), {}).value());
}

// Rank 0 of 2 whose partner failed its own checks: the first collective
// (the setup agreement) says so.
class FailedPartner final : public profile::Communicator {
  public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int size() const override { return 2; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, profile::ReduceOp op) override {
        if (calls++ == 0 && op == profile::ReduceOp::Max) values.assign(values.size(), 1.0);
        return values;
    }
    int calls = 0;
};

TEST_F(OptimizerSchedule, WhenAnotherRankFailsEveryRankSaysSoInsteadOfWaiting) {
    open(1);
    FailedPartner partner;
    PowerLimitOptimizerOptions options;
    options.communicator = &partner;
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, options);
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::InvalidState);
    EXPECT_NE(optimizer.error().message.find("another rank"), std::string::npos);
    EXPECT_EQ(partner.calls, 1);  // no further collective that the failed rank would never join
    // This rank's own failure still takes part in the agreement, then is reported as itself.
    FailedPartner fine_partner;
    options.communicator = &fine_partner;
    options.profile_steps = 0;
    auto refused = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("profile_steps"), std::string::npos);
    EXPECT_EQ(fine_partner.calls, 1);
}

}  // namespace
}  // namespace zeus::optimizer
