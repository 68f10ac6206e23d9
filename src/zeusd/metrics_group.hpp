// The daemon's metrics API group (ours; off by default, --enable metrics):
// GET /metrics serves what `zeus exporter` serves, read by the privileged
// daemon, so an unprivileged Prometheus gets RAPL energy without root. The
// devices are sampled on the group's own thread; a scrape never waits on one.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/device_metrics.hpp"
#include "zeusd/http_types.hpp"

namespace zeus::zeusd {

class MetricsGroup {
  public:
    // `gpus` and `cpus` may be null (none opened) and must outlive the group.
    // With `attribution`, the exporter's per-workload GPU energy series too.
    static Result<std::unique_ptr<MetricsGroup>> start(
        const Gpus* gpus, const Cpus* cpus, std::optional<metrics::AttributionOptions> attribution = std::nullopt,
        std::chrono::nanoseconds period = std::chrono::seconds(1));

    [[nodiscard]] Response respond(const Request& request) const;

  private:
    MetricsGroup() = default;
    Gpus no_gpus_;  // stands in when the daemon opened no GPUs
    std::unique_ptr<metrics::DeviceMetrics> metrics_;
};

}  // namespace zeus::zeusd
