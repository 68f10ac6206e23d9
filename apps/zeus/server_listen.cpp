#include "server_listen.hpp"

#include "option_checks.hpp"
#include "zeus/platform/listening_address.hpp"
#include "zeus/report/child_status.hpp"

#include <fmt/format.h>

#include <iostream>

namespace zeus::cli {

std::optional<std::string> listening(const Result<unsigned short>& listened, std::string_view listen,
                                     std::string_view command, unsigned default_port) {
    if (listened) return listening_address(listen, *listened);
    Error error = listened.error();
    error.message = "--listen: " + error.message;  // "cannot listen on ADDRESS: REASON", "... has no port"
    if (error.code != ErrorCode::OperatingSystem) {
        // The server component's example is zeusd's address; this command's port is its own.
        error.hint = fmt::format("give it as IP:PORT, for example 127.0.0.1:{0} or [::1]:{0} ({1}'s default port)",
                                 default_port, command);
    }
    std::cerr << command << ": " << error.describe() << "\n";
    return std::nullopt;
}

void say_stopped(std::string_view command, int signal) {
    std::cerr << command << ": stopped by " << report::signal_name(signal) << "\n";
}

void add_request_timeout_option(CLI::App& app, double& seconds) {
    app.add_option("--request-timeout-s", seconds,
                   "seconds a client may take to send a request, or stay idle between requests, before the "
                   "connection is dropped (a request waiting for its answer is never dropped)")
        ->capture_default_str()
        ->check(cli::finite_number(0.1, 3600.0, "s"));
}

std::chrono::milliseconds request_timeout(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

}  // namespace zeus::cli
