// The report texts match the original's __str__ f-strings character for
// character. Every expected string below was written by hand from the
// f-string format specs (:.1f, :.4f, :<width) applied to the chosen numbers.
#include <gtest/gtest.h>

#include "zeus/profile/profile.hpp"

namespace zeus::profile {
namespace {

SweepResult entry(double measurement, double cooldown, double mean, double stddev, double before, double after,
                  bool valid) {
    SweepResult e;
    e.measurement_duration = measurement;
    e.cooldown_duration = cooldown;
    e.energy_mean = mean;
    e.energy_std = stddev;
    e.avg_temperature_before = before;
    e.avg_temperature_after = after;
    e.is_valid = valid;
    return e;
}

TrialResult trial(double energy_per_iter, double total_energy, double total_time, double before, double after) {
    TrialResult t;
    t.energy_per_iter = energy_per_iter;
    t.total_energy = total_energy;
    t.total_time = total_time;
    t.temperature_before = before;
    t.temperature_after = after;
    return t;
}

TEST(SweepResultFormat, ValidLineRoundsHalfToEvenLikePython) {
    // 41.25 and 63.75 are exact in binary: ties go to the even digit (41.2, 63.8).
    const SweepResult e = entry(5.0, 10.0, 123.45678, 0.00512, 41.25, 63.75, true);
    EXPECT_EQ(e.to_string(),
              "measurement=5.0 s  cooldown=10.0 s  mean=123.4568 J  std=0.0051 J  "
              "temp_before=41.2 °C  temp_after=63.8 °C  [VALID]");
}

TEST(SweepResultFormat, InvalidLinePadsDecimals) {
    const SweepResult e = entry(2.5, 0.0, 0.5, 0.02, 40.0, 70.04, false);
    EXPECT_EQ(e.to_string(),
              "measurement=2.5 s  cooldown=0.0 s  mean=0.5000 J  std=0.0200 J  "
              "temp_before=40.0 °C  temp_after=70.0 °C  [INVALID]");
}

TEST(SweepReportFormat, MeasurementSweepAlignsPrefixes) {
    SweepReport report;
    report.sweep_param = {"measurement_duration", {1.0, 10.0, 2.5}};
    report.fixed_param = {"cooldown_duration", 10.0};
    report.entries = {entry(1.0, 10.0, 12.3456, 0.1, 35.0, 50.0, false),
                      entry(10.0, 10.0, 12.0, 0.005, 36.0, 60.0, true),
                      entry(2.5, 10.0, 12.1, 0.05, 35.5, 55.5, false)};
    EXPECT_EQ(report.to_string(),
              "Sweep measurement_duration (fixed cooldown_duration=10.0 s):\n"
              "  measurement_duration=1.0 s   mean=12.3456 J  std=0.1000 J  temp_before=35.0 °C  temp_after=50.0 °C  "
              "[INVALID]\n"
              "  measurement_duration=10.0 s  mean=12.0000 J  std=0.0050 J  temp_before=36.0 °C  temp_after=60.0 °C  "
              "[VALID]\n"
              "  measurement_duration=2.5 s   mean=12.1000 J  std=0.0500 J  temp_before=35.5 °C  temp_after=55.5 °C  "
              "[INVALID]");
}

TEST(SweepReportFormat, CooldownSweepUsesEachEntrysCooldown) {
    SweepReport report;
    report.sweep_param = {"cooldown_duration", {0.25, 12.0}};
    report.fixed_param = {"measurement_duration", 10.0};
    // 0.25 is exact in binary: the tie goes to the even digit (0.2).
    report.entries = {entry(10.0, 0.25, 2.0, 0.0, 45.0, 45.0, true), entry(10.0, 12.0, 2.5, 0.009999, 44.0, 46.0, true)};
    EXPECT_EQ(report.to_string(),
              "Sweep cooldown_duration (fixed measurement_duration=10.0 s):\n"
              "  cooldown_duration=0.2 s   mean=2.0000 J  std=0.0000 J  temp_before=45.0 °C  temp_after=45.0 °C  "
              "[VALID]\n"
              "  cooldown_duration=12.0 s  mean=2.5000 J  std=0.0100 J  temp_before=44.0 °C  temp_after=46.0 °C  "
              "[VALID]");
}

TEST(SweepReportFormat, SingleEntryHasNoPadding) {
    SweepReport report;
    report.sweep_param = {"measurement_duration", {3.0}};
    report.fixed_param = {"cooldown_duration", 0.0};
    report.entries = {entry(3.0, 0.0, 1.0, 0.001, 30.0, 31.0, true)};
    EXPECT_EQ(report.to_string(),
              "Sweep measurement_duration (fixed cooldown_duration=0.0 s):\n"
              "  measurement_duration=3.0 s  mean=1.0000 J  std=0.0010 J  temp_before=30.0 °C  temp_after=31.0 °C  "
              "[VALID]");
}

TEST(BuildSweepResult, SampleStandardDeviationAndStrictThreshold) {
    const std::vector<TrialResult> trials = {trial(1.0, 10.0, 1.0, 40.0, 50.0), trial(2.0, 20.0, 2.0, 42.0, 52.0),
                                             trial(3.0, 30.0, 3.0, 44.0, 60.0)};
    // mean 2, squared deviations 1 + 0 + 1 over n - 1 = 2: std exactly 1.
    const SweepResult at = build_sweep_result(4.0, 5.0, trials, 1.0);
    EXPECT_DOUBLE_EQ(at.energy_mean, 2.0);
    EXPECT_DOUBLE_EQ(at.energy_std, 1.0);
    EXPECT_FALSE(at.is_valid);  // 1.0 < 1.0 is false
    EXPECT_DOUBLE_EQ(at.avg_temperature_before, 42.0);
    EXPECT_DOUBLE_EQ(at.avg_temperature_after, 54.0);
    EXPECT_DOUBLE_EQ(at.avg_total_time, 2.0);
    EXPECT_DOUBLE_EQ(at.avg_total_energy, 20.0);
    EXPECT_EQ(at.measurement_duration, 4.0);
    EXPECT_EQ(at.cooldown_duration, 5.0);
    EXPECT_EQ(at.trials.size(), 3U);
    EXPECT_TRUE(build_sweep_result(4.0, 5.0, trials, 1.5).is_valid);
}

TEST(BuildSweepResult, OneTrialHasZeroSpread) {
    const SweepResult one = build_sweep_result(1.0, 1.0, {trial(7.0, 7.0, 1.0, 40.0, 41.0)}, 0.01);
    EXPECT_EQ(one.energy_std, 0.0);
    EXPECT_TRUE(one.is_valid);
    EXPECT_FALSE(build_sweep_result(1.0, 1.0, {trial(7.0, 7.0, 1.0, 40.0, 41.0)}, 0.0).is_valid);
}

TEST(Defaults, MatchTheOriginal) {
    EXPECT_EQ(default_search_range(), (std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0}));
    const MeasurementSweepOptions m;
    EXPECT_EQ(m.cooldown_duration, 10.0);
    EXPECT_EQ(m.num_trials, 10U);
    EXPECT_EQ(m.num_warmup_trials, 2U);
    EXPECT_EQ(m.trial_stddev_threshold, 0.01);
    EXPECT_EQ(m.num_warmup_iterations, 10U);
    EXPECT_EQ(m.num_calibration_iterations, 100U);
    EXPECT_FALSE(m.iteration_duration.has_value());
    const CooldownSweepOptions c;
    EXPECT_EQ(c.measurement_duration, 10.0);
    EXPECT_EQ(c.num_trials, 10U);
    EXPECT_EQ(c.num_warmup_trials, 2U);
    const ParameterProfileOptions p;
    EXPECT_EQ(p.num_trials, 10U);
    EXPECT_EQ(p.num_warmup_trials, 2U);
    EXPECT_EQ(p.trial_stddev_threshold, 0.01);
    const MeasureOptions mo;
    EXPECT_EQ(mo.num_warmup_iterations, 10U);
    EXPECT_EQ(mo.num_calibration_iterations, 100U);
}

}  // namespace
}  // namespace zeus::profile
