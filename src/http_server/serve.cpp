#include "http_server/serve.hpp"

#include <boost/asio/executor_work_guard.hpp>

#include <algorithm>
#include <thread>
#include <vector>

#include "http_server/stop_signals.hpp"

namespace zeus::http_server {

int serve_until_signalled(boost::asio::io_context& io, Server& server, unsigned threads,
                          const std::function<void()>& ready) {
    StopSignals stop_signals;
    auto work = boost::asio::make_work_guard(io);
    std::vector<std::thread> workers;
    for (unsigned i = 0; i < std::max(1U, threads); ++i) workers.emplace_back([&io] { io.run(); });
    if (ready) ready();
    const int signal = stop_signals.wait();
    server.stop();
    work.reset();
    io.stop();
    for (auto& worker : workers) worker.join();
    return signal;
}

}  // namespace zeus::http_server
