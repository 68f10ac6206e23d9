// How the server commands (exporter, bso-server, perseus-server) start
// listening on --listen, and what they say when they cannot; their common
// --request-timeout-s.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "zeus/platform/error.hpp"

namespace zeus::cli {

// Whether a server's listen_tcp(--listen) succeeded. On failure prints one
// line naming --listen, the address and the fix to standard error, prefixed
// with `command` ("zeus exporter"), and returns false: the command then
// exits 2. The fix's example address uses `default_port`, the command's own
// port (9466 for the exporter), never another server's.
[[nodiscard]] bool listening(const Result<unsigned short>& listened, std::string_view command, unsigned default_port);

// --request-timeout-s, as zeusd has it: how long a client may take to send
// a request, or sit idle on a keep-alive connection, before it is dropped.
void add_request_timeout_option(CLI::App& app, double& seconds);
[[nodiscard]] std::chrono::milliseconds request_timeout(double seconds);

}  // namespace zeus::cli
