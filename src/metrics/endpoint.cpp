#include "metrics/endpoint.hpp"

namespace zeus::metrics {

http_server::Response metrics_response(const DeviceMetrics& metrics, const http_server::Request& request) {
    namespace http = http_server::http;
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
        auto response = http_server::Response::text(http::status::method_not_allowed,
                                                    "/metrics takes GET requests (what Prometheus sends)\n");
        response.headers.emplace_back("Allow", "GET, HEAD");
        return response;
    }
    std::string_view accept;
    if (const auto header = request.find(http::field::accept); header != request.end()) accept = header->value();
    const Scrape scrape = metrics.scrape_for(accept);
    http_server::Response response;
    response.status = http::status::ok;
    response.content_type = std::string(scrape.content_type);
    if (request.method() == http::verb::get) response.body = *scrape.body;
    return response;
}

}  // namespace zeus::metrics
