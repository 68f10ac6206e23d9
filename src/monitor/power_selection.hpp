// Which GPUs a PowerMonitor or TemperatureMonitor samples.
#pragma once

#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::monitor_detail {

// The requested visible indices (each must exist and be available;
// duplicates dropped, order kept), or every available GPU when none is
// requested. Error when that leaves nothing to monitor.
[[nodiscard]] Result<std::vector<unsigned>> select_gpus(const Gpus& gpus, const std::vector<unsigned>& requested);

}  // namespace zeus::monitor_detail
