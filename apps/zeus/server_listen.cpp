#include "server_listen.hpp"

#include <iostream>

namespace zeus::cli {

bool listen_on(http_server::Server& server, const std::string& listen, std::string_view command) {
    auto listening = server.listen_tcp(listen);
    if (listening) return true;
    Error error = listening.error();
    if (error.code == ErrorCode::OperatingSystem) {
        error.message = "--listen: " + error.message;  // "cannot listen on ADDRESS: REASON"
        error.hint = "pick a free port with --listen IP:PORT, or stop the program listening there";
    } else {
        error.message = "--listen: " + error.message;
    }
    std::cerr << command << ": " << error.describe() << "\n";
    return false;
}

void add_request_timeout_option(CLI::App& app, double& seconds) {
    app.add_option("--request-timeout-s", seconds,
                   "seconds a client may take to send a request, or stay idle between requests, before the "
                   "connection is dropped (a request waiting for its answer is never dropped)")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
}

std::chrono::milliseconds request_timeout(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

}  // namespace zeus::cli
