// The exporter's sampler (src/metrics/device_metrics.cpp) over fake GPUs
// (tests/support/fake_gpu.hpp): a failed reading left out and counted, bad
// input named, sweeps on its own period.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "metrics/device_metrics_fixture.hpp"
#include "support/fake_gpu.hpp"

namespace zeus::metrics {
namespace {

using namespace std::chrono_literals;
using testing::find_samples;

class DeviceMetricsFake : public DeviceMetricsFixture<::testing::Test> {};

TEST_F(DeviceMetricsFake, AFailedReadingIsLeftOutAndCounted) {
    Gpus gpus = testing::fake_gpus(2);
    auto metrics = start(gpus, nullptr, every(1h));
    ASSERT_NE(metrics, nullptr);
    const double before = value(scrape(*metrics), "zeus_gpu_energy_joules_total", {{"gpu", "0"}});
    testing::fake(gpus, 0).lose();
    metrics->sample_now();
    metrics->sample_now();
    const auto samples = scrape(*metrics);
    // Gauges of the lost GPU are gone (no stale value, no NaN) ...
    EXPECT_TRUE(find_samples(samples, "zeus_gpu_power_instant_watts", {{"gpu", "0"}}).empty());
    EXPECT_TRUE(find_samples(samples, "zeus_gpu_temperature_celsius", {{"gpu", "0"}}).empty());
    // ... and so is its energy counter: repeating the last value scrape after
    // scrape would say the GPU drew nothing (Prometheus marks it stale) ...
    EXPECT_TRUE(find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", "0"}}).empty());
    // ... the failures are counted by device, reason and host, every sweep,
    // and GPU 1 is untouched.
    const std::map<std::string, std::string> lost{{"device", "gpu0"}, {"reason", "gpu_is_lost"}, {"hostname", "node-7"}};
    const double errors = value(samples, "zeus_exporter_read_errors_total", lost);
    EXPECT_GE(errors, 2.0);
    metrics->sample_now();
    EXPECT_GT(value(scrape(*metrics), "zeus_exporter_read_errors_total", lost), errors);
    EXPECT_EQ(find_samples(samples, "zeus_gpu_power_instant_watts", {{"gpu", "1"}}).size(), 1U);
    EXPECT_EQ(find_samples(samples, "zeus_gpu_energy_joules_total", {{"gpu", "1"}}).size(), 1U);
    EXPECT_TRUE(find_samples(samples, "zeus_exporter_read_errors_total", {{"device", "gpu1"}}).empty());
    testing::fake(gpus, 0).recover();
    metrics->sample_now();
    const auto back = scrape(*metrics);
    EXPECT_EQ(find_samples(back, "zeus_gpu_power_instant_watts", {{"gpu", "0"}}).size(), 1U);
    // Back, and never lower than before it was lost.
    EXPECT_GE(value(back, "zeus_gpu_energy_joules_total", {{"gpu", "0"}}), before);
}

TEST_F(DeviceMetricsFake, UnknownGpuIndexAndBadPeriodAreClearErrors) {
    Gpus gpus = testing::fake_gpus(2);
    auto unknown = DeviceMetrics::start(gpus, nullptr, with_gpus({3}));
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::NotFound);
    EXPECT_NE(unknown.error().describe().find("GPU index 3 is unknown: the visible GPUs are 0-1"), std::string::npos)
        << unknown.error().describe();
    EXPECT_NE(unknown.error().describe().find("zeus show-env"), std::string::npos);
    auto period = DeviceMetrics::start(gpus, nullptr, every(1ms));
    ASSERT_FALSE(period);
    EXPECT_EQ(period.error().code, ErrorCode::InvalidArgument);
}

TEST_F(DeviceMetricsFake, SamplesOnItsOwnPeriod) {
    Gpus gpus = testing::fake_gpus(1);
    auto metrics = start(gpus, nullptr, every(50ms));
    ASSERT_NE(metrics, nullptr);
    const auto first = metrics->scrape(ExpositionFormat::PrometheusText).body;
    std::this_thread::sleep_for(400ms);
    EXPECT_GE(metrics->stats().sweeps, 3U);
    EXPECT_NE(metrics->scrape(ExpositionFormat::PrometheusText).body, first) << "a new sweep publishes a new scrape";
}

}  // namespace
}  // namespace zeus::metrics
