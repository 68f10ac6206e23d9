// One HTTP/1.1 connection to zeusd over libcurl: a single easy handle, so
// the connection stays open between requests (keep-alive), guarded by a
// mutex so several threads may share one client.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "zeus/daemon/zeusd_client.hpp"

namespace zeus::daemon {

struct HttpReply {
    long status = 0;
    std::string body;
    std::string content_type;
};

class HttpConnection {
  public:
    explicit HttpConnection(const ZeusdConfig& config);
    HttpConnection(const HttpConnection&) = delete;
    HttpConnection& operator=(const HttpConnection&) = delete;
    ~HttpConnection();

    // `target` is the path and query ("/gpu/get_power?gpu_ids=0"). A
    // transport failure (no daemon, timeout, reset) is an Unavailable error
    // with curl's words; any HTTP answer, whatever its status, is a reply.
    [[nodiscard]] Result<HttpReply> request(std::string_view method, const std::string& target,
                                            std::chrono::milliseconds timeout);

  private:
    void* curl_ = nullptr;  // CURL*, kept out of this header
    std::string base_url_;
    std::string socket_path_;
    std::string authorization_;
    std::string endpoint_;
    std::string environment_;
    std::chrono::milliseconds connect_timeout_;
    std::mutex mutex_;
};

}  // namespace zeus::daemon
