// The project's one HTTP client: a libcurl easy handle per HttpClient, so the
// connection stays open between requests (keep-alive), guarded by a mutex so
// several threads may share one client. Over TCP or a Unix socket.
//
// Used by everything that talks HTTP to another server: the zeusd device
// backend, the Prometheus Pushgateway, carbon and price providers. A
// transport failure is an Error that names the server (`HttpEndpoint::name`)
// and carries the caller's fix; any HTTP answer, whatever its status, is a reply.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus {

struct HttpEndpoint {
    // "http://host:port" (or https://...). With a Unix socket the host part is
    // only what goes into the Host header; "http://localhost" is usual.
    std::string base_url;
    std::string unix_socket_path;  // empty: TCP
    // How messages name the server: "zeusd at unix:/run/zeusd/zeusd.sock".
    std::string name;
    // The fix printed when the server cannot be reached or does not answer in time.
    std::string unreachable_fix;
    std::string timeout_fix;
    // Sent with every request ("Authorization: Bearer ...").
    std::vector<std::string> headers;
    std::chrono::milliseconds connect_timeout{5'000};
    // Servers of this project's world are local or on the cluster network: an
    // http_proxy meant for the internet must not intercept them. Internet
    // APIs (carbon, prices) set this to false so a proxy the user set applies.
    bool bypass_proxy = true;
};

struct HttpRequest {
    std::string_view method = "GET";  // GET, POST, PUT, DELETE
    std::string target;               // path and query: "/gpu/get_power?gpu_ids=0"
    std::string body;
    std::string content_type;         // empty: no Content-Type header
    std::vector<std::string> headers; // in addition to the endpoint's
    std::chrono::milliseconds timeout{15'000};
};

struct HttpReply {
    long status = 0;
    std::string body;
    std::string content_type;
};

class HttpClient {
  public:
    explicit HttpClient(HttpEndpoint endpoint);
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;
    ~HttpClient();

    [[nodiscard]] const HttpEndpoint& endpoint() const { return endpoint_; }

    // Unavailable (cannot connect, reset), Timeout, or InvalidState (an
    // answer over the size bound) with curl's words; otherwise the reply.
    [[nodiscard]] Result<HttpReply> request(const HttpRequest& request);

    // The pre-request shape zeusd's client uses: no body.
    [[nodiscard]] Result<HttpReply> request(std::string_view method, const std::string& target,
                                            std::chrono::milliseconds timeout);

  private:
    void* curl_ = nullptr;  // CURL*, kept out of this header
    HttpEndpoint endpoint_;
    std::mutex mutex_;
};

}  // namespace zeus
