#include "http_server/stop_signals.hpp"

namespace zeus::http_server {

namespace {

bool ignored_at_start(int signal) {
    struct sigaction current {};
    return ::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

}  // namespace

StopSignals::StopSignals() {
    for (int signal : kStopSignals) {
        // nohup asked for the hangup not to end the server.
        if (signal == SIGHUP && ignored_at_start(signal)) continue;
        signals_.add(signal);
    }
}

int StopSignals::wait() {
    int caught = 0;
    signals_.async_wait([&caught](const boost::system::error_code&, int signal) { caught = signal; });
    io_.run();
    return caught;
}

}  // namespace zeus::http_server
