// The daemon's metrics API group (ours; off by default, --enable metrics):
// GET /metrics serves what `zeus exporter` serves, read by the privileged
// daemon, so an unprivileged Prometheus gets RAPL energy without root. The
// devices are sampled on the group's own thread; a scrape never waits on one.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/device_metrics.hpp"
#include "zeus/metrics/exposition.hpp"
#include "zeusd/http_types.hpp"

namespace zeus::zeusd {

// The daemon's own series (the owner policy's checks), read at each scrape.
using DaemonFamilies = std::function<std::vector<metrics::MetricFamily>()>;

class MetricsGroup {
  public:
    // `gpus` and `cpus` may be null (none opened) and must outlive the group.
    // With `attribution`, the exporter's per-workload GPU energy series too;
    // `daemon_families` come after the devices' in every scrape.
    static Result<std::unique_ptr<MetricsGroup>> start(
        const Gpus* gpus, const Cpus* cpus, std::optional<metrics::AttributionOptions> attribution = std::nullopt,
        DaemonFamilies daemon_families = {}, std::chrono::nanoseconds period = std::chrono::seconds(1));

    [[nodiscard]] Response respond(const Request& request) const;

  private:
    MetricsGroup() = default;
    Gpus no_gpus_;  // stands in when the daemon opened no GPUs
    std::unique_ptr<metrics::DeviceMetrics> metrics_;
    DaemonFamilies daemon_families_;
};

}  // namespace zeus::zeusd
