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

}  // namespace zeus::cli
