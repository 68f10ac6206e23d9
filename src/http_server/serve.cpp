#include "http_server/serve.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>

#include <algorithm>
#include <csignal>
#include <thread>
#include <vector>

namespace zeus::http_server {

void serve_until_signalled(boost::asio::io_context& io, Server& server, unsigned threads) {
    auto work = boost::asio::make_work_guard(io);
    std::vector<std::thread> workers;
    for (unsigned i = 0; i < std::max(1U, threads); ++i) workers.emplace_back([&io] { io.run(); });
    boost::asio::io_context signal_io;
    boost::asio::signal_set signals(signal_io, SIGINT, SIGTERM);
    signals.async_wait([](const boost::system::error_code&, int) {});
    signal_io.run();
    server.stop();
    work.reset();
    io.stop();
    for (auto& worker : workers) worker.join();
}

}  // namespace zeus::http_server
