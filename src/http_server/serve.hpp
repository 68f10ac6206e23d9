// The main loop of every server command: serve until a stop signal.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>

#include "http_server/server.hpp"

namespace zeus::http_server {

// Catches the stop signals (stop_signals.hpp), calls `ready` (where a command
// says that it listens: a signal from then on stops it gracefully), runs `io`
// on `threads` worker threads (at least one) until a stop signal arrives,
// then stops `server`, stops `io` and joins the workers. Returns the signal.
int serve_until_signalled(boost::asio::io_context& io, Server& server, unsigned threads,
                          const std::function<void()>& ready = {});

}  // namespace zeus::http_server
