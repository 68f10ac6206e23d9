// DeviceMetrics started the way the exporter starts it (host "node-7"), and
// its scrape parsed, over whichever GPUs the base fixture gives: the
// simulator's (device_metrics_sim_test.cpp) or fakes (device_metrics_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "prometheus_servers.hpp"
#include "zeus/metrics/device_metrics.hpp"

namespace zeus::metrics {

template <class Base>
class DeviceMetricsFixture : public Base {
  protected:
    static std::unique_ptr<DeviceMetrics> start(const Gpus& gpus, const Cpus* cpus, DeviceMetricsOptions options) {
        options.hostname = "node-7";
        options.on_new_error = [](const std::string&) {};
        auto metrics = DeviceMetrics::start(gpus, cpus, std::move(options));
        if (!metrics) ADD_FAILURE() << metrics.error().describe();
        return metrics ? std::move(metrics).value() : nullptr;
    }
    static DeviceMetricsOptions with_gpus(std::vector<unsigned> indices) {
        DeviceMetricsOptions options;
        options.gpu_indices = std::move(indices);
        return options;
    }
    static DeviceMetricsOptions every(std::chrono::nanoseconds period) {
        DeviceMetricsOptions options;
        options.period = period;
        return options;
    }
    static std::vector<testing::ParsedSample> scrape(const DeviceMetrics& metrics) {
        return testing::parse_exposition(*metrics.scrape(ExpositionFormat::PrometheusText).body);
    }
    static double value(const std::vector<testing::ParsedSample>& samples, const std::string& name,
                        const std::map<std::string, std::string>& match) {
        const auto found = testing::find_samples(samples, name, match);
        EXPECT_EQ(found.size(), 1U) << name;
        return found.empty() ? -1 : found[0].value;
    }
};

}  // namespace zeus::metrics
