// TemperatureMonitor on the real clock over fake GPUs
// (tests/support/fake_gpu.hpp) whose temperatures the test sets: each
// expected value is one the test scripted.
#include <gtest/gtest.h>

#include <thread>

#include "monitor/monitor_helpers.hpp"
#include "support/fake_gpu.hpp"
#include "zeus/monitor/temperature_monitor.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using testing::fake;
using testing::fake_gpus;

// What the fakes read until a test sets another temperature.
constexpr Celsius kIdle{40.0};

Gpus two_idle_gpus() {
    return fake_gpus(2, [](testing::FakeGpu& gpu) { gpu.set_temperature(kIdle); });
}

TemperatureMonitorOptions opts(std::chrono::nanoseconds period, std::vector<unsigned> gpus = {},
                               std::size_t max_samples = 0) {
    TemperatureMonitorOptions o;
    o.gpu_indices = std::move(gpus);
    o.update_period = period;
    o.max_samples_per_gpu = max_samples;
    return o;
}

std::unique_ptr<TemperatureMonitor> start(const Gpus& gpus, TemperatureMonitorOptions options) {
    return testing::started(TemperatureMonitor::start(gpus, std::move(options)));
}

TEST(TemperatureMonitor, RecordsChangesOnce) {
    Gpus gpus = two_idle_gpus();
    auto monitor = start(gpus, opts(10ms));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->gpu_indices(), (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(monitor->update_period(), 10ms);
    std::this_thread::sleep_for(100ms);
    // A steady temperature: one value, stored once.
    EXPECT_EQ(monitor->temperature_timeline(0).value().size(), 1U);
    const Timestamp before_change = MonitorClock::now();
    fake(gpus, 0).set_temperature(Celsius(71.0));
    std::this_thread::sleep_for(100ms);
    const Timestamp after_change = MonitorClock::now();

    const auto latest = monitor->temperature().value();
    EXPECT_EQ(latest.at(0), Celsius(71.0));
    const auto then = monitor->temperature(before_change).value();
    EXPECT_EQ(then.at(0), kIdle);
    const auto timeline = monitor->temperature_timeline(0).value();
    EXPECT_EQ(timeline.size(), 2U);  // one entry per change, not one per poll
    EXPECT_GE(monitor->stats().sweeps, 15U);
    EXPECT_EQ(monitor->temperature_timeline(1).value().size(), 1U);
    const auto window = monitor->all_temperature_timelines(before_change, after_change);
    ASSERT_EQ(window.size(), 2U);
    EXPECT_FALSE(window.at(0).empty());
    EXPECT_TRUE(window.at(1).empty());  // GPU 1 did not change in that window
}

TEST(TemperatureMonitor, ErrorsAndBound) {
    Gpus gpus = two_idle_gpus();
    auto unknown = TemperatureMonitor::start(gpus, opts(1s, {5}));
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().code, ErrorCode::InvalidArgument);
    auto zero = TemperatureMonitor::start(gpus, opts(0ns));
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().code, ErrorCode::InvalidArgument);

    auto monitor = start(gpus, opts(5ms, {1}, 2));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->temperature_timeline(0).error().code, ErrorCode::NotFound);
    for (double c : {60.0, 65.0, 70.0, 75.0}) {
        fake(gpus, 1).set_temperature(Celsius(c));
        std::this_thread::sleep_for(30ms);
    }
    monitor->stop();
    const auto timeline = monitor->temperature_timeline(1).value();
    ASSERT_EQ(timeline.size(), 2U);  // the newest two
    EXPECT_EQ(timeline.back().temperature, Celsius(75.0));
    EXPECT_EQ(timeline.front().temperature, Celsius(70.0));
    EXPECT_EQ(monitor->temperature(timeline.front().time - 1ms).error().code, ErrorCode::NoData);
    EXPECT_EQ(monitor->temperature(MonitorClock::now() + 1s).error().code, ErrorCode::NoData);
    EXPECT_TRUE(monitor->temperature(timeline.back().time).ok());
}

TEST(TemperatureMonitor, DestructionJoins) {
    Gpus gpus = two_idle_gpus();
    const std::size_t threads = testing::thread_count();
    {
        auto monitor = start(gpus, opts(1ms));
        ASSERT_NE(monitor, nullptr);
        EXPECT_EQ(testing::thread_count(), threads + 1);
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(testing::thread_count(), threads);
}

}  // namespace
}  // namespace zeus
