// GET /metrics on the project's HTTP server component, shared by
// `zeus exporter` and zeusd's metrics API group: the sampler's latest sweep,
// in the format the scraper's Accept header asks for. Never touches a device.
#pragma once

#include "http_server/message.hpp"
#include "zeus/metrics/device_metrics.hpp"

namespace zeus::metrics {

// The path every scraper asks for.
inline constexpr const char* kMetricsPath = "/metrics";

// 200 with the exposition for GET (HEAD too); 405 naming GET otherwise.
[[nodiscard]] http_server::Response metrics_response(const DeviceMetrics& metrics,
                                                     const http_server::Request& request);

}  // namespace zeus::metrics
