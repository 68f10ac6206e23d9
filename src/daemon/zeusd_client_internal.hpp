// Definitions ZeusdClient's two source files share.
#pragma once

#include "daemon/http_connection.hpp"
#include "zeus/daemon/zeusd_client.hpp"

namespace zeus {

struct ZeusdClient::Transport {
    explicit Transport(const ZeusdConfig& config) : connection(config) {}
    daemon::HttpConnection connection;
};

struct ZeusdClient::Reply {
    std::string target;
    daemon::HttpReply http;
};

}  // namespace zeus
