// How the server commands (exporter, bso-server, perseus-server) start
// listening on --listen, and what they say when they cannot.
#pragma once

#include <string>
#include <string_view>

#include "http_server/server.hpp"

namespace zeus::cli {

// Listens on the TCP address `listen`. On failure prints one line naming
// --listen, the address and the fix to standard error, prefixed with
// `command` ("zeus exporter"), and returns false: the command then exits 2.
[[nodiscard]] bool listen_on(http_server::Server& server, const std::string& listen, std::string_view command);

}  // namespace zeus::cli
