// How the server commands (exporter, bso-server, perseus-server) start
// listening on --listen, and what they say when they cannot; their common
// --request-timeout-s.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "zeus/platform/error.hpp"

namespace zeus::cli {

// Where a server listens after listen_tcp(listen), `listen` being its
// --listen text: HOST:PORT with the port it bound (the one the kernel chose
// for port 0), for the line the command prints. On failure prints one line
// naming --listen, the address and the fix to standard error, prefixed with
// `command` ("zeus exporter"), and returns nullopt: the command then exits 2.
// The fix's example address uses `default_port`, the command's own port
// (9466 for the exporter), never another server's.
[[nodiscard]] std::optional<std::string> listening(const Result<unsigned short>& listened, std::string_view listen,
                                                   std::string_view command, unsigned default_port);

// The line a server command prints when a stop signal ended it:
// "zeus exporter: stopped by SIGHUP".
void say_stopped(std::string_view command, int signal);

// --listen's help, the same for every server command.
inline constexpr const char* kListenHelp =
    "IP:PORT to listen on ([::1]:PORT for IPv6; port 0: one the system picks, printed once it listens)";

// --request-timeout-s, as zeusd has it: how long a client may take to send
// a request, or sit idle on a keep-alive connection, before it is dropped.
void add_request_timeout_option(CLI::App& app, double& seconds);
[[nodiscard]] std::chrono::milliseconds request_timeout(double seconds);

}  // namespace zeus::cli
