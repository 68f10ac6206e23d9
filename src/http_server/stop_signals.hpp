// The signals that stop every server (zeusd, `zeus exporter`, `zeus bso-server`,
// `zeus perseus-server`) gracefully, and the one place that catches them.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <array>
#include <csignal>

namespace zeus::http_server {

// SIGINT and SIGTERM; SIGHUP, because no server has a configuration to reload
// or a log file to reopen (each reads its flags once and logs to stderr), so a
// hangup means the terminal or session that ran it is gone; SIGQUIT, so that
// what the server holds (database, dumps, GPU settings to put back) is closed
// in order rather than left behind a core dump.
inline constexpr std::array<int, 4> kStopSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT};

class StopSignals {
  public:
    // Catches the stop signals from here on: one that arrives before wait()
    // is kept for it instead of killing the process. A SIGHUP that the
    // process inherited as ignored (nohup) stays ignored.
    StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // Blocks until a stop signal arrives; returns its number.
    int wait();

  private:
    // Its own io_context: a stop never waits for a server's worker to be free.
    boost::asio::io_context io_;
    boost::asio::signal_set signals_{io_};
};

}  // namespace zeus::http_server
