// What the daemon's request handling works on: the HTTP server component's
// request, peer and response (src/http_server/message.hpp), and the daemon's
// own JSON error body. Kept free of sockets so the router can be driven by
// tests and the fuzzer without a server.
#pragma once

#include <string>

#include "http_server/message.hpp"

namespace zeus::zeusd {

namespace http = boost::beast::http;
using http_server::Peer;
using http_server::Request;
using http_server::Respond;
using http_server::Response;

// {"error": message}, the original daemon's error body.
[[nodiscard]] Response error_response(http::status status, const std::string& message);

}  // namespace zeus::zeusd
