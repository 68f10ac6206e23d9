// The attribution engine over a scripted process source: exact conservation
// (shares + remainder == ΔE over every interval and every sum of intervals),
// the weights and their methods, the idle policies and the fallbacks.
#include <gtest/gtest.h>

#include <random>

#include "scripted_process_source.hpp"

namespace zeus::attribution {
namespace {

using testing::ScriptedProcessSource;
using Clock = Attributor::Clock;

std::int64_t total_of(const IntervalAttribution& a) { return a.attributed_mj() + a.remainder.energy_mj(); }

TEST(SplitExactly, PartsAddUpAndEachIsWithinOneMillijouleOfItsExactValue) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 2000; ++round) {
        const std::int64_t amount = std::uniform_int_distribution<std::int64_t>(0, 5'000'000)(rng);
        std::vector<std::uint64_t> weights(std::uniform_int_distribution<int>(1, 16)(rng));
        std::uint64_t total = 0;
        for (auto& w : weights) total += (w = std::uniform_int_distribution<std::uint64_t>(0, 600)(rng));
        const auto parts = split_exactly(amount, weights);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            sum += parts[i];
            const double exact =
                total == 0 ? static_cast<double>(amount) / static_cast<double>(weights.size())
                           : static_cast<double>(amount) * static_cast<double>(weights[i]) / static_cast<double>(total);
            EXPECT_LT(std::abs(static_cast<double>(parts[i]) - exact), 1.0) << "round " << round << " part " << i;
        }
        EXPECT_EQ(sum, amount) << "round " << round;
    }
}

TEST(SplitExactly, HugeAmountsAndWeightsDoNotOverflow) {
    const std::int64_t amount = std::int64_t{1} << 62;
    const auto parts = split_exactly(amount, {~std::uint64_t{0}, ~std::uint64_t{0} / 3});
    EXPECT_EQ(parts[0] + parts[1], amount);
    EXPECT_GT(parts[0], parts[1]);
}

// 1,000 random intervals on 4 GPUs with 1-16 processes each (some with no
// samples, some with none at all), both idle policies: every interval's
// parts add up to its ΔE, and all intervals' parts to the counters' change.
TEST(Attributor, ConservesEnergyExactlyOverAThousandRandomIntervals) {
    for (IdlePolicy policy : {IdlePolicy::Unattributed, IdlePolicy::ByAllocation}) {
        ScriptedProcessSource source;
        AttributorOptions options;
        options.idle_policy = policy;
        options.idle_power = {Milliwatts(60'000), std::nullopt, Milliwatts(80'000), std::nullopt};
        Attributor attributor(source, options);
        std::mt19937_64 rng(policy == IdlePolicy::Unattributed ? 1 : 2);
        const std::size_t gpus = 4;
        std::vector<std::int64_t> counter(gpus, 1'000'000), start(gpus), parts(gpus, 0);
        auto now = Clock::time_point{} + std::chrono::hours(1);
        std::uint64_t timestamp_us = 1'700'000'000'000'000;
        for (std::size_t g = 0; g < gpus; ++g) {
            (void)attributor.step(g, Millijoules(counter[g]), now);
            start[g] = counter[g];
        }
        for (int interval = 0; interval < 1000; ++interval) {
            const std::size_t g = interval % gpus;
            const auto dt = std::chrono::milliseconds(std::uniform_int_distribution<int>(1, 5000)(rng));
            now += dt;
            counter[g] += std::uniform_int_distribution<std::int64_t>(0, 3'000'000)(rng);
            auto& running = source.running[g];
            running.clear();
            const int processes = std::uniform_int_distribution<int>(0, 16)(rng);
            for (int p = 0; p < processes; ++p) running.push_back({static_cast<std::uint32_t>(1000 + p), 0});
            for (int p = 0; p < processes; ++p) {
                if (rng() % 3 == 0) continue;  // no sample this time
                timestamp_us += 1000;
                source.buffer[g].push_back(
                    {static_cast<std::uint32_t>(1000 + p), timestamp_us, static_cast<std::uint32_t>(rng() % 101)});
            }
            const IntervalAttribution a = attributor.step(g, Millijoules(counter[g]), now);
            ASSERT_EQ(total_of(a), a.delta_mj) << "interval " << interval;
            for (const Share& share : a.shares) {
                ASSERT_GE(share.active_mj, 0);
                ASSERT_GE(share.idle_mj, 0);
            }
            parts[g] += total_of(a);
        }
        for (std::size_t g = 0; g < gpus; ++g) EXPECT_EQ(parts[g], counter[g] - start[g]) << "GPU " << g;
    }
}

TEST(Attributor, FirstCallIsTheBaselineAndSkipsTheSamplesAlreadyInTheDriver) {
    ScriptedProcessSource source;
    source.buffer[0] = {{7, 100, 90}, {8, 200, 10}};
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    const IntervalAttribution baseline = attributor.step(0, Millijoules(5000), t0);
    EXPECT_EQ(baseline.delta_mj, 0);
    EXPECT_TRUE(baseline.shares.empty());
    source.running[0] = {{7, 0}, {8, 0}};
    source.buffer[0].push_back({7, 300, 30});
    source.buffer[0].push_back({8, 400, 10});
    const IntervalAttribution a = attributor.step(0, Millijoules(5000 + 4000), t0 + std::chrono::seconds(1));
    ASSERT_EQ(a.shares.size(), 2u);
    EXPECT_EQ(a.shares[0].method, Method::Utilization);
    // Only the samples after the baseline count (30 : 10), not 90+30 : 10+10.
    EXPECT_EQ(a.shares[0].active_mj, 3000);
    EXPECT_EQ(a.shares[1].active_mj, 1000);
    EXPECT_EQ(source.last_seen_asked, (std::vector<std::uint64_t>{0, 200}));
}

TEST(Attributor, UtilizationIsAccumulatedOverTheIntervalNotTheLastSample) {
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    source.running[0] = {{1, 0}, {2, 0}};
    // Process 1 busy in five samples, process 2 in one (its last sample is the newest).
    source.buffer[0] = {{1, 10, 100}, {1, 20, 100}, {1, 30, 100}, {1, 40, 100}, {1, 50, 100}, {2, 60, 100}};
    const IntervalAttribution a = attributor.step(0, Millijoules(6000), t0 + std::chrono::seconds(1));
    ASSERT_EQ(a.shares.size(), 2u);
    EXPECT_EQ(a.shares[0].active_mj, 5000);
    EXPECT_EQ(a.shares[1].active_mj, 1000);
}

// One process for 2 s at 300 J on a GPU that idles at 50 W.
IntervalAttribution one_process_for_two_seconds(IdlePolicy policy) {
    ScriptedProcessSource source;
    AttributorOptions options;
    options.idle_policy = policy;
    options.idle_power = {Milliwatts(50'000)};
    Attributor attributor(source, options);
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    source.running[0] = {{42, 0}};
    return attributor.step(0, Millijoules(300'000), t0 + std::chrono::seconds(2));
}

TEST(Attributor, OneProcessIsExclusiveAndGetsEverythingAboveIdle) {
    const IntervalAttribution a = one_process_for_two_seconds(IdlePolicy::Unattributed);
    ASSERT_EQ(a.shares.size(), 1u);
    EXPECT_EQ(a.shares[0].method, Method::Exclusive);
    EXPECT_EQ(a.shares[0].active_mj, 300'000 - 50'000 * 2);
    EXPECT_EQ(a.remainder.idle_mj, 100'000);
    EXPECT_EQ(a.remainder.no_process_mj, 0);
}

TEST(Attributor, ByAllocationGivesTheIdleEnergyToTheProcessesOnTheGpu) {
    const IntervalAttribution a = one_process_for_two_seconds(IdlePolicy::ByAllocation);
    ASSERT_EQ(a.shares.size(), 1u);
    EXPECT_EQ(a.shares[0].energy_mj(), 300'000);
    EXPECT_EQ(a.shares[0].idle_mj, 100'000);
    EXPECT_EQ(a.remainder.energy_mj(), 0);
}

TEST(Attributor, WithoutUtilizationTheRunningProcessesSplitEquallyAndTheErrorIsReported) {
    ScriptedProcessSource source;
    source.utilization_error = Error{ErrorCode::NotSupported, "process utilization is not supported on MIG", {}};
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    source.running[0] = {{1, 0}, {2, 0}, {3, 0}};
    const IntervalAttribution a = attributor.step(0, Millijoules(1000), t0 + std::chrono::seconds(1));
    ASSERT_EQ(a.shares.size(), 3u);
    for (const Share& share : a.shares) EXPECT_EQ(share.method, Method::EqualSplit);
    EXPECT_EQ(a.shares[0].active_mj + a.shares[1].active_mj + a.shares[2].active_mj, 1000);
    EXPECT_EQ(a.shares[2].active_mj, 333);
    ASSERT_EQ(a.errors.size(), 1u);
    EXPECT_EQ(a.errors[0].code, ErrorCode::NotSupported);
}

TEST(Attributor, NotSupportedIsReportedOnceAndNotAskedAgain) {
    ScriptedProcessSource source;
    source.utilization_error = Error{ErrorCode::NotSupported, "no process utilization on MIG", {}};
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);  // the baseline asks once
    source.running[0] = {{1, 0}, {2, 0}};
    const IntervalAttribution first = attributor.step(0, Millijoules(1000), t0 + std::chrono::seconds(1));
    EXPECT_EQ(first.errors.size(), 1u);
    const std::size_t asked = source.last_seen_asked.size();
    const IntervalAttribution second = attributor.step(0, Millijoules(2000), t0 + std::chrono::seconds(2));
    EXPECT_TRUE(second.errors.empty());
    EXPECT_EQ(source.last_seen_asked.size(), asked);
    ASSERT_EQ(second.shares.size(), 2u);
    EXPECT_EQ(second.shares[0].method, Method::EqualSplit);
    EXPECT_EQ(second.shares[0].active_mj + second.shares[1].active_mj, 1000);
}

TEST(Attributor, NoNewerSampleIsNotAnErrorAndFallsBackToEqualSplit) {
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    source.running[0] = {{1, 0}, {2, 0}};
    const IntervalAttribution a = attributor.step(0, Millijoules(1000), t0 + std::chrono::seconds(1));
    EXPECT_TRUE(a.errors.empty());
    ASSERT_EQ(a.shares.size(), 2u);
    EXPECT_EQ(a.shares[0].method, Method::EqualSplit);
    EXPECT_EQ(a.shares[0].active_mj, 500);
}

TEST(Attributor, ProcessesListUnavailableLeavesTheEnergyInTheRemainderWithTheError) {
    ScriptedProcessSource source;
    source.running_error = Error{ErrorCode::GpuLost, "GPU is lost", {}};
    source.utilization_error = Error{ErrorCode::GpuLost, "GPU is lost", {}};
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    const IntervalAttribution a = attributor.step(0, Millijoules(1000), t0 + std::chrono::seconds(1));
    EXPECT_TRUE(a.shares.empty());
    EXPECT_EQ(a.remainder.no_process_mj, 1000);
    EXPECT_EQ(a.errors.size(), 2u);
}

TEST(Attributor, LearnsTheIdlePowerFromIntervalsWithNoProcess) {
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(0), t0);
    EXPECT_FALSE(attributor.idle_power(0).has_value());
    // 2 s with nobody: 140 J → 70 W; then 1 s at 75 W: the minimum stays.
    (void)attributor.step(0, Millijoules(140'000), t0 + std::chrono::seconds(2));
    (void)attributor.step(0, Millijoules(215'000), t0 + std::chrono::seconds(3));
    ASSERT_TRUE(attributor.idle_power(0).has_value());
    EXPECT_EQ(attributor.idle_power(0)->count(), 70'000);
    source.running[0] = {{9, 0}};
    const IntervalAttribution a = attributor.step(0, Millijoules(415'000), t0 + std::chrono::seconds(4));
    EXPECT_EQ(a.remainder.idle_mj, 70'000);
    EXPECT_EQ(a.shares.at(0).active_mj, 130'000);
}

TEST(Attributor, ACounterThatGoesBackwardsStartsANewBaseline) {
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    const auto t0 = Clock::time_point{} + std::chrono::seconds(10);
    (void)attributor.step(0, Millijoules(5000), t0);
    const IntervalAttribution a = attributor.step(0, Millijoules(100), t0 + std::chrono::seconds(1));
    EXPECT_EQ(a.delta_mj, 0);
    source.running[0] = {{1, 0}};
    const IntervalAttribution b = attributor.step(0, Millijoules(600), t0 + std::chrono::seconds(2));
    EXPECT_EQ(b.delta_mj, 500);
}

TEST(IdlePolicy, ParsesItsTwoNamesAndRejectsOthersWithTheChoices) {
    EXPECT_EQ(*parse_idle_policy("unattributed"), IdlePolicy::Unattributed);
    EXPECT_EQ(*parse_idle_policy("allocation"), IdlePolicy::ByAllocation);
    const auto bad = parse_idle_policy("equal");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("'equal'"), std::string::npos);
    EXPECT_NE(bad.error().hint.find("allocation"), std::string::npos);
}

}  // namespace
}  // namespace zeus::attribution
