// What RFC 9112 asks of a server about a request's first lines that Beast
// leaves to it: a later HTTP/1 minor version is served as HTTP/1.1 (2.3;
// Beast refuses anything but 1.0 and 1.1), another major version gets 505,
// an HTTP/1.1 request needs exactly one Host header (3.2), and an
// absolute-form target ("http://host:port/path?query", what a proxy-minded
// client sends) must be accepted (3.2.2): the routes see its origin form.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "http_server/message.hpp"

namespace zeus::http_server {

// For a request line Beast refused (bad_version) at the start of `bytes`:
// when it says HTTP/1.x with x from 2 to 9, rewrites it in place to HTTP/1.1
// and returns true, so that the request can be parsed again.
[[nodiscard]] bool downgrade_minor_version(std::span<char> bytes);

// The status for a request line with a version Beast refused and that
// downgrade_minor_version() did not take: 505 for another major version
// (HTTP/2.0 as text, HTTP/0.9), 400 for a malformed one.
[[nodiscard]] http::status status_for_bad_version(std::span<const char> bytes);

// Why `request` (its header, as parsed) must be refused with 400, or
// nothing: Host missing from an HTTP/1.1 request, or Host given twice.
[[nodiscard]] std::optional<std::string> host_problem(const Request& request);

// An absolute-form target becomes its path and query ("/" for none); any
// other target is left as it is.
void to_origin_form(Request& request);

}  // namespace zeus::http_server
