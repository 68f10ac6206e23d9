// Where the HTTP server component's own messages go (accept failures,
// dropped clients, a removed stale socket): the server that uses it passes
// its own logger.
#pragma once

#include <functional>
#include <string>

namespace zeus::http_server {

enum class LogLevel { Error, Warn, Info, Debug };
using LogSink = std::function<void(LogLevel level, const std::string& message)>;

}  // namespace zeus::http_server
