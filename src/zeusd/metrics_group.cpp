#include "zeusd/metrics_group.hpp"

#include "metrics/endpoint.hpp"

namespace zeus::zeusd {

Result<std::unique_ptr<MetricsGroup>> MetricsGroup::start(const Gpus* gpus, const Cpus* cpus,
                                                          std::optional<metrics::AttributionOptions> attribution,
                                                          std::chrono::nanoseconds period) {
    std::unique_ptr<MetricsGroup> group(new MetricsGroup());
    metrics::DeviceMetricsOptions options;
    options.period = period;
    options.attribution = std::move(attribution);
    auto sampler = metrics::DeviceMetrics::start(gpus != nullptr ? *gpus : group->no_gpus_, cpus, std::move(options));
    if (!sampler) return sampler.error();
    group->metrics_ = std::move(sampler).value();
    return group;
}

Response MetricsGroup::respond(const Request& request) const { return metrics::metrics_response(*metrics_, request); }

}  // namespace zeus::zeusd
