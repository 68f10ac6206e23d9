// The main loop of every server command: serve until SIGINT or SIGTERM.
#pragma once

#include <boost/asio/io_context.hpp>

#include "http_server/server.hpp"

namespace zeus::http_server {

// Runs `io` on `threads` worker threads (at least one) until the process gets
// SIGINT or SIGTERM, then stops `server`, stops `io` and joins the workers.
// The signals are waited for on an io_context of their own, so that a
// shutdown never waits for a worker to be free.
void serve_until_signalled(boost::asio::io_context& io, Server& server, unsigned threads);

}  // namespace zeus::http_server
