// What the daemon's request handling works on: a parsed request, who sent it,
// and the answer to send. Kept free of sockets so the router can be driven by
// tests and the fuzzer without a server.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace zeus::zeusd {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;

// The other end of a connection. Unix sockets tell who it is (SO_PEERCRED);
// TCP connections only tell the address.
struct Peer {
    std::uint64_t connection_id = 0;
    std::optional<pid_t> pid;
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    std::string address;  // "unix" or "127.0.0.1:51234"

    // "pid 123 uid 1000 gid 1000" or the address, for logs.
    [[nodiscard]] std::string describe() const;
};

enum class StreamKind { GpuPower, CpuPower };

// An accepted Server-Sent Events subscription: the server keeps the
// connection open and writes `data: <json>\n\n` for each new value.
struct StreamSpec {
    StreamKind kind = StreamKind::GpuPower;
    std::vector<unsigned> ids;
};

struct Response {
    http::status status = http::status::ok;
    std::string content_type = "application/json";
    std::string body;
    bool www_authenticate = false;   // 401s carry WWW-Authenticate: Bearer realm="zeusd"
    std::optional<StreamSpec> stream;  // set: answer with an event stream instead

    [[nodiscard]] static Response json(std::string body, http::status status = http::status::ok);
    // {"error": message}
    [[nodiscard]] static Response error(http::status status, const std::string& message);
    // Plain text, as the original's request extractors answer malformed queries.
    [[nodiscard]] static Response text(http::status status, std::string body);
    [[nodiscard]] static Response empty_ok();
};

}  // namespace zeus::zeusd
