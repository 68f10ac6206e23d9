// The monitors' storage and timing helpers, without any device.
#include <gtest/gtest.h>

#include "monitor/power_series.hpp"
#include "monitor/power_timing.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using monitor_detail::SampleSeries;

const Timestamp kT0 = Timestamp(std::chrono::hours(1));

PowerSample at(std::chrono::nanoseconds offset, double watts) { return {kT0 + offset, Watts(watts)}; }
double watts(const PowerSample& s) { return s.power.count(); }

TEST(PowerSeries, IntegratesEachValueAsHeldUntilTheNextSample) {
    SampleSeries<PowerSample> series;
    series.push(at(0s, 100));
    series.push(at(1s, 200));
    series.push(at(3s, 50));
    // [0.5, 1): 100 W, [1, 3): 200 W, [3, 4): 50 W.
    EXPECT_DOUBLE_EQ(series.integrate(kT0 + 500ms, kT0 + 4s, watts), 50.0 + 400.0 + 50.0);
    // Inside one held value.
    EXPECT_DOUBLE_EQ(series.integrate(kT0 + 1200ms, kT0 + 2200ms, watts), 200.0);
    // A single stored sample (steady power, stored once) still integrates.
    SampleSeries<PowerSample> steady;
    steady.push(at(0s, 300));
    EXPECT_DOUBLE_EQ(steady.integrate(kT0 + 2s, kT0 + 12s, watts), 3000.0);
    EXPECT_DOUBLE_EQ(steady.integrate(kT0 + 2s, kT0 + 2s, watts), 0.0);
}

TEST(PowerSeries, RangeIsInclusiveAndInForceIsTheLastSampleAtOrBefore) {
    SampleSeries<PowerSample> series;
    for (int i = 0; i < 5; ++i) series.push(at(i * 1s, 10.0 * i));
    auto r = series.range(kT0 + 1s, kT0 + 3s);
    ASSERT_EQ(r.size(), 3U);
    EXPECT_EQ(r.front().time, kT0 + 1s);
    EXPECT_EQ(r.back().time, kT0 + 3s);
    EXPECT_EQ(series.range(std::nullopt, std::nullopt).size(), 5U);
    EXPECT_EQ(series.range(kT0 + 5s, std::nullopt).size(), 0U);
    EXPECT_FALSE(series.in_force(kT0 - 1ns).has_value());
    EXPECT_EQ(series.in_force(kT0), 0U);
    EXPECT_EQ(series.in_force(kT0 + 2s - 1ns), 1U);
    EXPECT_EQ(series.in_force(kT0 + 2s), 2U);
    EXPECT_EQ(series.in_force(kT0 + 100s), 4U);
}

TEST(PowerSeries, BoundDropsTheOldestFirst) {
    SampleSeries<PowerSample> series(3);
    for (int i = 0; i < 10; ++i) series.push(at(i * 1s, i));
    ASSERT_EQ(series.size(), 3U);
    EXPECT_EQ(series.front().time, kT0 + 7s);
    EXPECT_EQ(series.back().time, kT0 + 9s);
}

TEST(PowerSampleTime, UsesTheDeviceRefreshTimeOnTheSteadyClock) {
    const Timestamp polled = kT0 + 10s;
    const auto wall = std::chrono::system_clock::time_point(std::chrono::hours(500000));
    // Refreshed 30 ms before the poll: the sample is placed 30 ms before it.
    EXPECT_EQ(monitor_detail::sample_time(polled, wall, wall - 30ms, kT0 + 9s), polled - 30ms);
    // No refresh time: the poll time.
    EXPECT_EQ(monitor_detail::sample_time(polled, wall, std::nullopt, kT0 + 9s), polled);
    // Never before the previous poll (the change was not visible then), never
    // after this one, never more than a second old.
    EXPECT_EQ(monitor_detail::sample_time(polled, wall, wall - 30ms, polled - 10ms), polled - 10ms);
    EXPECT_EQ(monitor_detail::sample_time(polled, wall, wall + 5s, kT0 + 9s), polled);
    EXPECT_EQ(monitor_detail::sample_time(polled, wall, wall - 1h, std::nullopt), polled - 1s);
}

}  // namespace
}  // namespace zeus
