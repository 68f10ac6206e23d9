#include "zeus/metrics/exporter.hpp"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>

#include "http_server/serve.hpp"
#include "http_server/server.hpp"
#include "metrics/endpoint.hpp"

namespace zeus::metrics {

namespace {

namespace hs = zeus::http_server;

hs::Response route(const DeviceMetrics& metrics, const hs::Request& request) {
    const std::string_view path = hs::split_target(request.target()).path;
    if (path == kMetricsPath) return metrics_response(metrics, request);
    if (path == "/") return hs::Response::text(hs::http::status::ok, "zeus exporter: Prometheus metrics are at /metrics\n");
    return hs::Response::text(hs::http::status::not_found,
                              fmt::format("no route for {}; the metrics are at /metrics\n", path));
}

hs::ServerOptions http_options() {
    hs::ServerOptions options;
    options.name = "zeus-exporter";
    return options;
}

}  // namespace

struct Exporter::Parts {
    explicit Parts(const DeviceMetrics& metrics)
        : server(
              io,
              [&metrics](const hs::Request& request, const hs::Peer&, hs::Respond respond) {
                  respond(route(metrics, request));
              },
              http_options()) {}

    boost::asio::io_context io;
    hs::Server server;
};

Exporter::Exporter(const DeviceMetrics& metrics) : parts_(std::make_unique<Parts>(metrics)) {}

Exporter::~Exporter() = default;

Result<unsigned short> Exporter::listen_tcp(const std::string& address) { return parts_->server.listen_tcp(address); }

int Exporter::serve_until_signalled(const std::function<void()>& ready) {
    return hs::serve_until_signalled(parts_->io, parts_->server, 2, ready);
}

}  // namespace zeus::metrics
