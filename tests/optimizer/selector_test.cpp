// Optimum selectors on a GPU model whose optimum is known in closed form
// (reference/optimizers.md §6.1 b): 60 W static power, 250 W unconstrained
// draw, 0.1 s per step at full speed; below 250 W a limit p draws p and a
// step takes 0.1·(190/(p − 60))^0.6 s. Each expectation below is derived from
// the selector's definition over these formulas, not from the code's output.
#include "zeus/optimizer/optimum_selector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace zeus::optimizer {
namespace {

constexpr double kSteps = 40;

double step_time(double p) { return p >= 250 ? 0.1 : 0.1 * std::pow(190.0 / (p - 60.0), 0.6); }
double draw(double p) { return std::min(p, 250.0); }

// Profiling order: 300 W down to 100 W in 25 W steps, `gpus` identical GPUs.
std::vector<PowerLimitMeasurement> analytic(int gpus = 1) {
    std::vector<PowerLimitMeasurement> out;
    for (int p = 300; p >= 100; p -= 25) {
        const double t = kSteps * step_time(p);
        out.push_back({Milliwatts(p * 1000), Joules(gpus * t * draw(p)), Seconds(t)});
    }
    return out;
}

double w(Milliwatts limit) { return static_cast<double>(limit.count()) / 1000.0; }

// The highest limit among those minimising `score` (profiling order is
// descending, so "first minimum" is "highest limit at the minimum").
template <class Score>
double highest_minimiser(const std::vector<PowerLimitMeasurement>& ms, Score score) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& m : ms) best = std::min(best, score(m));
    double limit = 0;
    for (const auto& m : ms) {
        if (score(m) == best) limit = std::max(limit, w(m.power_limit));
    }
    return limit;
}

Milliwatts pick(const SelectorPtr& s, const std::vector<PowerLimitMeasurement>& ms, int world_size = 1) {
    auto r = s->select(ms, SelectionContext{world_size});
    EXPECT_TRUE(r.ok()) << r.error().describe();
    return r.ok() ? *r : Milliwatts(0);
}

TEST(Selectors, EnergyPicksTheLeastEnergy) {
    const auto ms = analytic();
    EXPECT_EQ(w(pick(energy_selector(), ms)), highest_minimiser(ms, [](auto& m) { return m.energy.count(); }));
    // The model's optimum sits near 60/(1 − 0.6) = 150 W.
    EXPECT_EQ(w(pick(energy_selector(), ms)), 150.0);
}

TEST(Selectors, TimeBreaksItsThreeWayTieTowardTheHighestLimit) {
    const auto ms = analytic();
    // 300, 275 and 250 W all take exactly 0.1 s per step.
    ASSERT_EQ(ms[0].time, ms[1].time);
    ASSERT_EQ(ms[1].time, ms[2].time);
    EXPECT_EQ(w(pick(time_selector(), ms)), highest_minimiser(ms, [](auto& m) { return m.time.count(); }));
    EXPECT_EQ(w(pick(time_selector(), ms)), 300.0);
}

TEST(Selectors, ZeusCostMinimisesTheWeightedCost) {
    for (int gpus : {1, 4}) {
        const auto ms = analytic(gpus);
        for (double eta : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) {
            const double max_power = 300.0 * gpus;
            const auto cost = [&](const PowerLimitMeasurement& m) {
                return eta * m.energy.count() + (1 - eta) * max_power * m.time.count();
            };
            EXPECT_EQ(w(pick(zeus_cost(eta, gpus).value(), ms)), highest_minimiser(ms, cost))
                << "eta " << eta << ", " << gpus << " GPUs";
            // Without its own world size it counts the context's GPUs.
            EXPECT_EQ(pick(zeus_cost(eta).value(), ms, gpus), pick(zeus_cost(eta, gpus).value(), ms));
        }
    }
}

TEST(Selectors, ZeusCostAtTheEndsIsTimeOrEnergy) {
    const auto ms = analytic(2);
    EXPECT_EQ(pick(zeus_cost(0.0, 2).value(), ms), pick(time_selector(), ms));
    EXPECT_EQ(pick(zeus_cost(1.0, 2).value(), ms), pick(energy_selector(), ms));
}

TEST(Selectors, ZeusCostWithTooSmallAWorldSizeOverweightsEnergy) {
    // The original's DDP trap: energy over 4 GPUs, time priced for 1. That
    // acts as a larger eta, so the choice can only move to lower limits.
    const auto ms = analytic(4);
    bool moved = false;
    for (double eta : {0.25, 0.5, 0.75, 0.9}) {
        const double right = w(pick(zeus_cost(eta, 4).value(), ms));
        const double trapped = w(pick(zeus_cost(eta, 1).value(), ms));
        EXPECT_LE(trapped, right) << eta;
        moved = moved || trapped < right;
    }
    EXPECT_TRUE(moved);
}

TEST(Selectors, MaxSlowdownPicksTheLowestLimitWithinTheBudget) {
    const auto ms = analytic();
    for (double factor : {1.0, 1.05, 1.1, 1.2, 1.3, 1.5, 2.0, 100.0}) {
        const double budget = factor * ms.front().time.count();  // the time at the maximum limit
        double expected = 1e9;
        for (const auto& m : ms) {
            if (m.time.count() <= budget) expected = std::min(expected, w(m.power_limit));
        }
        EXPECT_EQ(w(pick(max_slowdown_constraint(factor).value(), ms)), expected) << factor;
    }
}

TEST(Selectors, MaxSlowdownMeasuresAgainstTheMaximumLimitNotTheFastest) {
    // 275 W ran a little faster than 300 W: the budget is still 300 W's time.
    std::vector<PowerLimitMeasurement> ms{{Milliwatts(300000), Joules(100), Seconds(10.0)},
                                          {Milliwatts(275000), Joules(90), Seconds(9.5)},
                                          {Milliwatts(250000), Joules(80), Seconds(10.0)},
                                          {Milliwatts(225000), Joules(75), Seconds(10.4)}};
    EXPECT_EQ(w(pick(max_slowdown_constraint(1.0).value(), ms)), 250.0);
    EXPECT_EQ(w(pick(max_slowdown_constraint(1.05).value(), ms)), 225.0);
}

TEST(Selectors, BadSettingsAreErrorsThatSayWhatIsAccepted) {
    for (double eta : {-0.1, 1.1, std::nan("")}) {
        auto s = zeus_cost(eta);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(s.error().message.find("outside [0, 1]"), std::string::npos);
    }
    EXPECT_FALSE(zeus_cost(0.5, 0).ok());
    auto f = max_slowdown_constraint(0.99);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.error().hint.find("1.1"), std::string::npos);
    EXPECT_FALSE(max_slowdown_constraint(std::nan("")).ok());
    auto empty = energy_selector()->select({}, {});
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, ErrorCode::NoData);
}

TEST(Selectors, ParsedSpecsBehaveLikeTheirConstructors) {
    const auto ms = analytic(4);
    const auto same = [&](std::string_view spec, const SelectorPtr& direct) {
        auto parsed = parse_selector(spec);
        ASSERT_TRUE(parsed.ok()) << spec << ": " << parsed.error().describe();
        EXPECT_EQ((*parsed)->name(), direct->name()) << spec;
        EXPECT_EQ(pick(*parsed, ms, 4), pick(direct, ms, 4)) << spec;
    };
    same("time", time_selector());
    same("energy", energy_selector());
    same("zeus-cost", zeus_cost(0.5).value());
    same("zeus-cost:eta=0.9", zeus_cost(0.9).value());
    same("zeus-cost:eta=0.75,world_size=1", zeus_cost(0.75, 1).value());
    same("max-slowdown:1.2", max_slowdown_constraint(1.2).value());
    // Names parse back to the same selector.
    for (const auto& s : {zeus_cost(0.25, 3).value(), max_slowdown_constraint(1.5).value()}) {
        EXPECT_EQ(parse_selector(s->name()).value()->name(), s->name());
    }
}

TEST(Selectors, MalformedSpecsNameTheProblem) {
    for (const char* spec : {"", "fastest", "time:1", "zeus-cost:eta", "zeus-cost:eta=x", "zeus-cost:speed=1",
                             "zeus-cost:world_size=1.5", "max-slowdown", "max-slowdown:0.5", "zeus-cost:eta=2"}) {
        auto s = parse_selector(spec);
        ASSERT_FALSE(s.ok()) << spec;
        EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument) << spec;
        EXPECT_FALSE(s.error().hint.empty()) << spec;
    }
}

}  // namespace
}  // namespace zeus::optimizer
