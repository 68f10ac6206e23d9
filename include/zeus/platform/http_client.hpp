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
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus {

struct CurlApi;  // platform/curl_api.hpp

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

    // A long answer read as it arrives (server-sent events): each piece of a
    // 200 answer's body goes to `on_data`, which returns false to end the
    // transfer; `keep_going` is asked at least once a second and ends it when
    // false. No time limit but the connect timeout (request.timeout is
    // ignored). An ended transfer is not an error. The reply has the status,
    // and the body of an answer that is not 200 (bounded as request()'s).
    [[nodiscard]] Result<HttpReply> stream(const HttpRequest& request,
                                           const std::function<bool(std::string_view)>& on_data,
                                           const std::function<bool()>& keep_going);

    // The pre-request shape zeusd's client uses: no body.
    [[nodiscard]] Result<HttpReply> request(std::string_view method, const std::string& target,
                                            std::chrono::milliseconds timeout);

  private:
    // One transfer: the shared options, then `configure` (timeout, body sink),
    // perform, then `finish` (the reply, or nullopt for curl's own error).
    using Configure = std::function<void(const CurlApi&, void*)>;
    using Finish = std::function<std::optional<Result<HttpReply>>(int, const CurlApi&, void*)>;
    [[nodiscard]] Result<HttpReply> perform(const HttpRequest& request, const Configure& configure,
                                            const Finish& finish);
    [[nodiscard]] Error overflow_error(const HttpRequest& request) const;

    void* curl_ = nullptr;  // CURL*, kept out of this header
    HttpEndpoint endpoint_;
    std::mutex mutex_;
};

}  // namespace zeus
