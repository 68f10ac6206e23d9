// The recommendation: the shortest valid durations and their wall-time cost,
// computed from hand-built reports (the costs below follow from the chosen
// trial times by arithmetic, written out in the comments).
#include <gtest/gtest.h>

#include "zeus/profile/recommendation.hpp"

namespace zeus::profile {
namespace {

SweepResult entry(double measurement, double cooldown, bool valid, double window_s, double time_per_iter) {
    SweepResult e;
    e.measurement_duration = measurement;
    e.cooldown_duration = cooldown;
    e.is_valid = valid;
    e.avg_total_time = window_s;
    TrialResult t;
    t.time_per_iter = time_per_iter;
    e.trials = {t, t};
    return e;
}

SweepReport report(const char* swept, const char* fixed_name, double fixed_value, std::vector<SweepResult> entries) {
    SweepReport r;
    r.sweep_param.first = swept;
    for (const auto& e : entries) {
        r.sweep_param.second.push_back(std::string(swept) == "cooldown_duration" ? e.cooldown_duration
                                                                                 : e.measurement_duration);
    }
    r.fixed_param = {fixed_name, fixed_value};
    r.entries = std::move(entries);
    return r;
}

TEST(Recommendation, ShortestValidPairWithItsWallTime) {
    // Swept out of order: the shortest valid value wins, not the first valid one.
    const SweepReport m = report("measurement_duration", "cooldown_duration", 8.0,
                                 {entry(4.0, 8.0, true, 4.1, 0.5), entry(1.0, 8.0, false, 1.2, 0.5),
                                  entry(3.0, 8.0, true, 3.1, 0.25), entry(6.0, 8.0, true, 6.0, 0.5)});
    const SweepReport c = report("cooldown_duration", "measurement_duration", 6.0,
                                 {entry(6.0, 0.0, false, 6.0, 0.5), entry(6.0, 2.0, true, 6.0, 0.5),
                                  entry(6.0, 5.0, true, 6.0, 0.5)});
    const auto r = recommend(m, c, 4).value();
    EXPECT_EQ(r.measurement_duration, 3.0);
    EXPECT_EQ(r.cooldown_duration, 2.0);
    // Timing from the 3.0 s entry: window 3.1 s, warm-up 4 x 0.25 s = 1.0 s, plus the 2.0 s cool-down.
    EXPECT_DOUBLE_EQ(r.window_time, 3.1);
    EXPECT_DOUBLE_EQ(r.warmup_time, 1.0);
    EXPECT_DOUBLE_EQ(r.wall_time_per_measurement, 6.1);
    // 3.1 / 6.1 = 50.8 % measured.
    EXPECT_EQ(r.to_string(),
              "Recommended: measurement_duration=3.0 s, cooldown_duration=2.0 s; one measurement takes 6.1 s of wall "
              "time (2.0 s cool-down + 1.0 s warm-up + 3.1 s window, 51% of it measured)");
}

TEST(Recommendation, NoneWithoutAValidEntry) {
    const SweepReport m = report("measurement_duration", "cooldown_duration", 8.0, {entry(1.0, 8.0, false, 1.0, 0.5)});
    const SweepReport c = report("cooldown_duration", "measurement_duration", 1.0, {entry(1.0, 2.0, true, 1.0, 0.5)});
    EXPECT_FALSE(recommend(m, c, 10).has_value());
    EXPECT_FALSE(recommend(m, 10).has_value());
    EXPECT_FALSE(recommend(SweepReport{}, 10).has_value());
}

TEST(Recommendation, OneSweepKeepsItsFixedValue) {
    const SweepReport c = report("cooldown_duration", "measurement_duration", 2.0,
                                 {entry(2.0, 1.0, false, 2.0, 0.1), entry(2.0, 3.0, true, 2.2, 0.1)});
    const auto r = recommend(c, 0).value();
    EXPECT_EQ(r.measurement_duration, 2.0);
    EXPECT_EQ(r.cooldown_duration, 3.0);
    EXPECT_DOUBLE_EQ(r.warmup_time, 0.0);
    EXPECT_DOUBLE_EQ(r.wall_time_per_measurement, 3.0 + 2.2);
}

}  // namespace
}  // namespace zeus::profile
