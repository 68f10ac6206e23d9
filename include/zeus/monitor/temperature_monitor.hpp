// Temperature timelines, the same shape as PowerMonitor: one sampling thread,
// repeated values stored once, queries over any interval.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus {

struct TemperatureSample {
    Timestamp time;
    Celsius temperature;
};

struct TemperatureMonitorOptions {
    std::vector<unsigned> gpu_indices;  // empty = every available GPU
    std::chrono::nanoseconds update_period = std::chrono::seconds(1);
    std::size_t max_samples_per_gpu = 0;  // 0 = unbounded
};

class TemperatureMonitor {
  public:
    static Result<std::unique_ptr<TemperatureMonitor>> start(const Gpus& gpus, TemperatureMonitorOptions options);
    virtual ~TemperatureMonitor() = default;
    virtual void stop() = 0;

    [[nodiscard]] virtual std::chrono::nanoseconds update_period() const = 0;
    [[nodiscard]] virtual std::vector<unsigned> gpu_indices() const = 0;
    [[nodiscard]] virtual MonitorStats stats() const = 0;

    [[nodiscard]] virtual Result<std::vector<TemperatureSample>> temperature_timeline(
        unsigned gpu, std::optional<Timestamp> start = std::nullopt,
        std::optional<Timestamp> end = std::nullopt) const = 0;
    [[nodiscard]] virtual std::map<unsigned, std::vector<TemperatureSample>> all_temperature_timelines(
        std::optional<Timestamp> start = std::nullopt, std::optional<Timestamp> end = std::nullopt) const = 0;
    // Temperature of each GPU at `at` (default: latest): the sample in force then.
    [[nodiscard]] virtual Result<std::map<unsigned, Celsius>> temperature(
        std::optional<Timestamp> at = std::nullopt) const = 0;
};

}  // namespace zeus
