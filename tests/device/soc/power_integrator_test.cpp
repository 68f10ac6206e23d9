#include "device/soc/power_integrator.hpp"

#include <gtest/gtest.h>

#include "device/soc/ina3221_rails.hpp"

namespace zeus::soc {
namespace {

using namespace std::chrono_literals;
using Clock = PowerIntegrator::Clock;

TEST(PowerIntegrator, FirstSampleIsTheBaseline) {
    PowerIntegrator p;
    EXPECT_EQ(p.add(Watts(50), Clock::time_point(1s)).count(), 0.0);
    EXPECT_EQ(p.last_power(), Watts(50));
    EXPECT_EQ(p.samples(), 1U);
}

TEST(PowerIntegrator, ConstantAndLinearPowerAreExact) {
    PowerIntegrator p;
    const Clock::time_point t0(10s);
    p.add(Watts(4), t0);
    p.add(Watts(4), t0 + 250ms);
    EXPECT_DOUBLE_EQ(p.add(Watts(4), t0 + 1s).count(), 4.0);
    // A ramp from 4 W to 8 W over 2 s, sampled unevenly: 12 J.
    p.add(Watts(5), t0 + 1500ms);
    EXPECT_DOUBLE_EQ(p.add(Watts(8), t0 + 3s).count(), 4.0 + 12.0);
    EXPECT_EQ(p.longest_gap(), Clock::duration(1500ms));
}

TEST(PowerIntegrator, StepErrorIsAtMostHalfTheStepTimesTheGap) {
    // 2 W until 0.37 s, 10 W after; samples every 100 ms. True energy over
    // [0, 1 s] = 2 x 0.37 + 10 x 0.63 = 7.04 J.
    PowerIntegrator p;
    const Clock::time_point t0(0s);
    Joules e{0};
    for (int k = 0; k <= 10; ++k) {
        const auto t = t0 + k * 100ms;
        e = p.add(t < t0 + 370ms ? Watts(2) : Watts(10), t);
    }
    const double truth = 2 * 0.37 + 10 * 0.63;
    EXPECT_LE(std::abs(e.count() - truth), (10 - 2) * 0.1 / 2 + 1e-12);
    EXPECT_GT(std::abs(e.count() - truth), 0.0);  // the bound is not vacuous here
}

TEST(PowerIntegrator, NegativePowerCountsAsZeroSoTheTotalNeverDecreases) {
    PowerIntegrator p;
    p.add(Watts(2), Clock::time_point(0s));
    p.add(Watts(-1), Clock::time_point(1s));  // (2 + 0) / 2 x 1 s
    EXPECT_DOUBLE_EQ(p.total().count(), 1.0);
    EXPECT_EQ(p.negative_readings(), 1U);
    EXPECT_EQ(p.last_power(), Watts(0));
}

TEST(PowerIntegrator, AnEarlierTimestampAddsNothing) {
    PowerIntegrator p;
    p.add(Watts(2), Clock::time_point(2s));
    EXPECT_EQ(p.add(Watts(2), Clock::time_point(1s)).count(), 0.0);
    EXPECT_DOUBLE_EQ(p.add(Watts(2), Clock::time_point(3s)).count(), 2.0);
}

TEST(PowerIntegrator, AnEarlierSampleLeavesTheNewerPowerInPlace) {
    // Two readers: the sample taken at 1 s arrives after the one taken at 2 s.
    PowerIntegrator p;
    p.add(Watts(2), Clock::time_point(0s));
    p.add(Watts(2), Clock::time_point(2s));
    p.add(Watts(100), Clock::time_point(1s));
    EXPECT_DOUBLE_EQ(p.add(Watts(2), Clock::time_point(3s)).count(), 6.0);  // 2 W for 3 s
    EXPECT_EQ(p.last_power(), Watts(2));
}

TEST(ClassifyRail, FollowsTheOriginalsRules) {
    EXPECT_EQ(classify_rail("VDD_CPU"), SocMetric::Cpu);
    EXPECT_EQ(classify_rail("POM_5V_CPU"), SocMetric::Cpu);
    EXPECT_EQ(classify_rail("VDD_SYS_GPU"), SocMetric::Gpu);
    EXPECT_EQ(classify_rail("gpu"), SocMetric::Gpu);
    EXPECT_EQ(classify_rail("VDD_IN"), SocMetric::Total);
    EXPECT_EQ(classify_rail("POM_5V_IN"), SocMetric::Total);
    EXPECT_EQ(classify_rail("system_power"), SocMetric::Total);
    EXPECT_EQ(classify_rail("Total"), SocMetric::Total);
    // cpu is checked first: Orin Nano's combined rail counts as CPU (docs/jetson.md).
    EXPECT_EQ(classify_rail("VDD_CPU_GPU_CV"), SocMetric::Cpu);
    EXPECT_EQ(classify_rail("VDD_SOC"), std::nullopt);
    EXPECT_EQ(classify_rail("VDDQ_VDD2_1V8AO"), std::nullopt);
}

}  // namespace
}  // namespace zeus::soc
