// Energy integrated by the SoC's own sampler thread, checked against power x
// time measured by the test's clock. total_energy() samples every rail
// inside the call, so a reading's sample time lies between the test's clock
// readings just before and just after the call: that bracket, not a
// tolerance, bounds the expected energy.
#include <gtest/gtest.h>

#include <thread>

#include "fake_jetson.hpp"

namespace zeus::test {
namespace {

using namespace std::chrono_literals;

constexpr double kRoundingJoules = 2e-6;  // the total is kept in whole µJ

struct Reading {
    Clock::time_point before;
    SocEnergy energy;
    Clock::time_point after;
};

Reading read(const Soc& soc) {
    Reading r;
    r.before = Clock::now();
    auto e = soc.total_energy();
    r.after = Clock::now();
    if (!e) throw std::runtime_error(e.error().describe());
    r.energy = std::move(e).value();
    return r;
}

double joules(const SocEnergy& e, SocMetric m) { return e.metric(m).value().count(); }

// Constant power P between readings a and b: P x (sample time b - sample time a).
void expect_constant(const Reading& a, const Reading& b, SocMetric m, double watts) {
    const double delta = joules(b.energy, m) - joules(a.energy, m);
    EXPECT_GE(delta, watts * seconds(b.before - a.after) - kRoundingJoules) << to_string(m);
    EXPECT_LE(delta, watts * seconds(b.after - a.before) + kRoundingJoules) << to_string(m);
}

TEST(JetsonEnergy, ConstantPowerIsPowerTimesElapsedOnTheIioLayout) {
    FakeJetson fake;
    const auto dir = fake.iio("6-0040", 0);
    FakeJetson::iio_rail_power(dir, 0, "POM_5V_IN", 5000);    // 5 W
    FakeJetson::iio_rail_vi(dir, 1, "POM_5V_GPU", 5000, 400);  // 2 W
    FakeJetson::iio_rail_power(dir, 2, "POM_5V_CPU", 1250);    // 1.25 W
    auto soc = open_fake(fake, 5ms);

    const Reading a = read(*soc);
    std::this_thread::sleep_for(300ms);
    const Reading b = read(*soc);
    expect_constant(a, b, SocMetric::Total, 5.0);
    expect_constant(a, b, SocMetric::Gpu, 2.0);
    expect_constant(a, b, SocMetric::Cpu, 1.25);
    EXPECT_GT(joules(b.energy, SocMetric::Total), 5.0 * 0.29);
    // The sampler thread ran meanwhile, not only the two reads.
    EXPECT_GT(find_rail(soc->rails(), "POM_5V_IN")->stats.samples, 10U);
    EXPECT_EQ(b.energy.source, SocEnergySource::IntegratedPower);
}

TEST(JetsonEnergy, ConstantPowerOnTheHwmonLayoutAndRailsOfOneMetricAreSummed) {
    FakeJetson fake;
    const auto dir = fake.hwmon("1-0040", 1);
    FakeJetson::hwmon_rail(dir, 1, "VDD_IN", 5000, 1000);  // 5 W
    FakeJetson::hwmon_rail(dir, 2, "VDD_CPU", 5000, 200);  // 1 W
    FakeJetson::hwmon_rail(dir, 3, "VDD_CPU_CV", 5000, 100);  // 0.5 W, also "cpu"
    auto soc = open_fake(fake, 5ms);

    const Reading a = read(*soc);
    std::this_thread::sleep_for(250ms);
    const Reading b = read(*soc);
    expect_constant(a, b, SocMetric::Total, 5.0);
    expect_constant(a, b, SocMetric::Cpu, 1.5);
    const SocEnergy window = b.energy.since(a.energy);
    EXPECT_NEAR(window.metric(SocMetric::Cpu)->count(),
                window.rail("VDD_CPU")->count() + window.rail("VDD_CPU_CV")->count(), 1e-9);
    EXPECT_NEAR(window.elapsed.count(), (b.energy.elapsed - a.energy.elapsed).count(), 1e-12);
    EXPECT_FALSE(window.metric(SocMetric::Gpu).ok());
}

TEST(JetsonEnergy, StepChangeMidWindowIsWithinHalfTheStepTimesTheLongestGap) {
    FakeJetson fake;
    const auto dir = fake.hwmon("1-0040", 1);
    FakeJetson::hwmon_rail(dir, 1, "VDD_IN", 5000, 400);  // 2 W, then 8 W
    auto soc = open_fake(fake, 10ms);
    const double p1 = 2.0;
    const double p2 = 8.0;

    const Reading a = read(*soc);
    std::this_thread::sleep_for(150ms);
    const auto w0 = Clock::now();
    FakeJetson::write(dir / "curr1_input", "1600\n");
    const auto w1 = Clock::now();
    std::this_thread::sleep_for(150ms);
    const Reading b = read(*soc);

    // True energy = p1 (tw - sa) + p2 (sb - tw) with sa, tw, sb each known to
    // lie within a bracket of the test's clock; take its extremes.
    const auto t = [&](Clock::time_point x) { return seconds(x - a.before); };
    const double lowest = p2 * t(b.before) - p1 * t(a.after) - (p2 - p1) * t(w1);
    const double highest = p2 * t(b.after) - p1 * t(a.before) - (p2 - p1) * t(w0);
    // The trapezoid puts the step mid-way between the samples around it: off
    // by at most half the gap between them (plus the read's own duration).
    const auto rail = find_rail(soc->rails(), "VDD_IN");
    const double bound = (p2 - p1) * (rail->stats.longest_gap.count() / 2 + 0.001) + kRoundingJoules;
    const double delta = joules(b.energy, SocMetric::Total) - joules(a.energy, SocMetric::Total);
    EXPECT_GE(delta, lowest - bound);
    EXPECT_LE(delta, highest + bound);
    EXPECT_NEAR(rail->power->count(), p2, 1e-9);
    // And the step was seen: more than constant p1 could have given.
    EXPECT_GT(delta, p1 * seconds(b.before - a.after) + 0.1);
}

TEST(JetsonEnergy, DestroyingTheSocStopsItsThreadPromptly) {
    FakeJetson fake;
    FakeJetson::iio_rail_power(fake.iio("6-0040"), 0, "VDD_IN", 1000);
    const auto start = Clock::now();
    {
        auto soc = open_fake(fake, 10'000ms);
        EXPECT_TRUE(soc->available());
    }
    EXPECT_LT(Clock::now() - start, 2s);
}

}  // namespace
}  // namespace zeus::test
