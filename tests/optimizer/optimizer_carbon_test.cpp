// The carbon-aware selector in the optimizer over fake GPUs: re-selection as
// the recorded intensity moves, and a failed re-selection (its specs:
// tests/carbon/carbon_aware_test.cpp).
#include <deque>
#include <fstream>

#include "optimizer/optimizer_schedule_fixture.hpp"
#include "zeus/carbon/carbon_aware_power_limit.hpp"
#include "zeus/carbon/intensity_file.hpp"

namespace zeus::optimizer {
namespace {

// The carbon selector in the optimizer: after profiling, each step in a new
// hour of a recorded intensity file re-selects exactly when the intensity
// moved more than 10% from the one the limit was chosen at, and the limit is
// then the argmin of eta·E·I/I_first + (1 − eta)·MaxPower·T computed here.
TEST_F(OptimizerSchedule, CarbonSelectorReselectsWhenTheIntensityMovesPastItsThreshold) {
    open(2);
    const std::vector<double> intensity{100, 105, 1000, 950, 300, 310, 2000, 100};
    const auto csv = dir_ / "intensity.csv";
    {
        std::ofstream out(csv);
        out << "datetime,carbon_intensity\n";
        for (std::size_t h = 0; h < intensity.size(); ++h) {
            out << "2024-12-01T" << (h < 10 ? "0" : "") << h << ":00:00Z," << intensity[h] << "\n";
        }
    }
    auto provider = carbon::intensity_from_file(csv.string());
    ASSERT_TRUE(provider.ok()) << provider.error().describe();
    using namespace std::chrono;
    const carbon::UtcTime day{sys_days{year{2024} / December / 1}};
    std::size_t hour = 0;
    auto intensity_now =
        carbon::intensity_now(std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(provider).value()),
                              [&] { return day + hours(hour) + minutes(30); });

    auto selector = carbon::parse_selector_with_carbon("carbon:eta=0.5,threshold=0.1", intensity_now);
    ASSERT_TRUE(selector.ok()) << selector.error().describe();
    auto optimizer = profiled_with(*selector);
    ASSERT_TRUE(optimizer);
    ModelTraining& t = training();

    const auto& ms = optimizer->measurements();
    auto expected_limit = [&](double scale) {
        double best = INFINITY;
        Milliwatts chosen{0};
        for (const auto& m : ms) {
            const double cost = 0.5 * m.energy.count() * scale + 0.5 * 300.0 * 2 * m.time.count();
            if (cost < best) {
                best = cost;
                chosen = m.power_limit;
            }
        }
        return chosen;
    };
    EXPECT_EQ(optimizer->optimal_power_limit(), expected_limit(1.0));  // chosen at the first intensity
    double chosen_at = intensity[0];
    int reselections = 0;
    std::set<std::int64_t> distinct;
    for (hour = 1; hour < intensity.size(); ++hour) {
        if (std::abs(intensity[hour] - chosen_at) > 0.1 * chosen_at) {
            chosen_at = intensity[hour];
            ++reselections;
        }
        t.step(*optimizer);
        ASSERT_FALSE(HasFatalFailure());
        const Milliwatts expected = expected_limit(chosen_at / intensity[0]);
        distinct.insert(expected.count());
        EXPECT_EQ(t.limit_during.back(), expected) << "hour " << hour << " at " << intensity[hour];
        EXPECT_EQ(optimizer->optimal_power_limit(), expected) << "hour " << hour;
        EXPECT_EQ(optimizer->reselections(), reselections) << "hour " << hour;
    }
    EXPECT_EQ(reselections, 4);  // 1000, 300, 2000, 100 (105, 950 and 310 are within 10%)
    EXPECT_GE(distinct.size(), 2U) << "the intensities must move the choice for this test to mean anything";

    EXPECT_EQ(optimizer->selector()->name(), "carbon:eta=0.5,threshold=0.1");
}

TEST_F(OptimizerSchedule, AFailedCarbonReselectionKeepsTheLimitAndWarns) {
    open(1);
    // Reads in order: the choice at the end of profiling, then a stale() check that sees a 10× move,
    // then the re-selection's read, which fails.
    std::deque<Result<double>> reads{100.0, 1000.0,
                                     Error{ErrorCode::NoData, "provider unreachable", "check the network", 0}};
    auto selector = carbon::carbon_aware_selector(
        [&]() -> Result<double> {
            if (reads.empty()) return 1000.0;
            auto r = reads.front();
            reads.pop_front();
            return r;
        },
        {});
    ASSERT_TRUE(selector.ok()) << selector.error().describe();
    auto optimizer = profiled_with(*selector);
    ASSERT_TRUE(optimizer);
    ModelTraining& t = training();
    const auto chosen = optimizer->optimal_power_limit();
    ASSERT_TRUE(chosen);
    t.step(*optimizer);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(reads.empty());
    EXPECT_EQ(optimizer->optimal_power_limit(), chosen);
    EXPECT_EQ(t.limit_during.back(), *chosen);
    EXPECT_EQ(optimizer->reselections(), 0);
    ASSERT_FALSE(optimizer->warnings().empty());
    EXPECT_NE(optimizer->warnings().back().find("provider unreachable"), std::string::npos);
}

}  // namespace
}  // namespace zeus::optimizer
