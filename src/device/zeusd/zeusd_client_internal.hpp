// Definitions ZeusdClient's two source files share.
#pragma once

#include "zeus/platform/http_client.hpp"
#include "zeus/device/zeusd_client.hpp"

namespace zeus {

// How the project's HTTP client reaches this daemon, and what it tells a
// user who cannot reach it.
[[nodiscard]] HttpEndpoint zeusd_endpoint(const ZeusdConfig& config);

struct ZeusdClient::Transport {
    explicit Transport(const ZeusdConfig& config) : connection(zeusd_endpoint(config)) {}
    HttpClient connection;
};

struct ZeusdClient::Reply {
    std::string target;
    HttpReply http;
};

}  // namespace zeus
