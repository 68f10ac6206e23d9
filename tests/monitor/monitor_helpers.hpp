// Small helpers of the monitors' tests, over fakes or the simulator alike.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "zeus/monitor/power_monitor.hpp"

namespace zeus::testing {

// A monitor as started, or null after a test failure that says why not.
template <class Monitor>
std::unique_ptr<Monitor> started(Result<std::unique_ptr<Monitor>> monitor) {
    if (!monitor) ADD_FAILURE() << monitor.error().describe();
    return monitor ? std::move(monitor).value() : nullptr;
}

inline PowerMonitorOptions power_options(std::optional<std::chrono::nanoseconds> period,
                                         std::vector<PowerDomain> domains = {}, std::vector<unsigned> gpus = {},
                                         std::size_t max_samples = 0) {
    PowerMonitorOptions o;
    o.gpu_indices = std::move(gpus);
    o.update_period = period;
    o.domains = std::move(domains);
    o.max_samples_per_gpu = max_samples;
    return o;
}

// Threads of this process now (a monitor's sampling thread shows here).
inline std::size_t thread_count() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

}  // namespace zeus::testing
