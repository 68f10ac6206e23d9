#include "zeusd/metrics_group.hpp"

#include "metrics/endpoint.hpp"

namespace zeus::zeusd {

Result<std::unique_ptr<MetricsGroup>> MetricsGroup::start(const Gpus* gpus, const Cpus* cpus,
                                                          std::optional<metrics::AttributionOptions> attribution,
                                                          DaemonFamilies daemon_families,
                                                          std::chrono::nanoseconds period) {
    std::unique_ptr<MetricsGroup> group(new MetricsGroup());
    group->daemon_families_ = std::move(daemon_families);
    metrics::DeviceMetricsOptions options;
    options.period = period;
    options.attribution = std::move(attribution);
    auto sampler = metrics::DeviceMetrics::start(gpus != nullptr ? *gpus : group->no_gpus_, cpus, std::move(options));
    if (!sampler) return sampler.error();
    group->metrics_ = std::move(sampler).value();
    return group;
}

namespace {

constexpr std::string_view kEof = "# EOF\n";

}  // namespace

Response MetricsGroup::respond(const Request& request) const {
    Response response = metrics::metrics_response(*metrics_, request);
    if (!daemon_families_ || response.status != http::status::ok || response.body.empty()) return response;
    std::string_view accept;
    if (const auto header = request.find(http::field::accept); header != request.end()) accept = header->value();
    const auto format = metrics::negotiate_format(accept);
    std::string extra = metrics::render(daemon_families_(), format);
    // OpenMetrics ends with its one "# EOF" line: the daemon's families go before it.
    if (format == metrics::ExpositionFormat::OpenMetrics && response.body.ends_with(kEof)) {
        response.body.resize(response.body.size() - kEof.size());
        if (!extra.ends_with(kEof)) extra += kEof;
    }
    response.body += extra;
    return response;
}

}  // namespace zeus::zeusd
