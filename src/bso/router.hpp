// The original's REST API (zeus/optimizer/batch_size/common.py, server/router.py)
// over a Service: routes, JSON field names, status codes, validation (422 in
// FastAPI's {"detail": [...]} shape) and errors as {"message": ...}. It never
// sees a socket, so tests drive it directly; `zeus bso-server` gives it to the
// project's HTTP server component.
#pragma once

#include "bso/service.hpp"
#include "http_server/message.hpp"

namespace zeus::bso {

class Router {
public:
    explicit Router(Service& service) : service_(service) {}
    http_server::Response handle(const http_server::Request& request);

private:
    Service& service_;
};

}  // namespace zeus::bso
