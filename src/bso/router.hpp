// The original's REST API (zeus/optimizer/batch_size/common.py, server/router.py)
// over a Service: routes, JSON field names, status codes, validation (422 in
// FastAPI's {"detail": [...]} shape) and errors as {"message": ...}. It never
// sees a socket, so tests drive it directly; `zeus bso-server` gives it to the
// project's HTTP server component.
#pragma once

#include "bso/service.hpp"
#include "http_server/log_sink.hpp"
#include "http_server/message.hpp"
#include "http_server/rate_limited_log.hpp"

namespace zeus::bso {

class Router {
public:
    // `log` gets the failures answered 500 (a database error), at most one
    // per 10 s; their text (which may quote SQL) never goes in a response.
    explicit Router(Service& service, http_server::LogSink log = {}) : service_(service), log_(std::move(log)) {}
    http_server::Response handle(const http_server::Request& request);

private:
    Service& service_;
    http_server::LogSink log_;
    http_server::RateLimitedWarning failures_;
};

}  // namespace zeus::bso
