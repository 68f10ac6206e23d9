// The batch-size optimizer server (the original's BSO server) as one object:
// its database connections, the REST API and the project's HTTP server
// component. `zeus bso-server` serves it until a signal.
// docs/batch-size-optimizer.md.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::bso {

struct ServerOptions {
    // "postgresql://..." (a libpq URI), "sqlite://PATH" or an SQLite file path.
    std::string database = "zeus-bso.db";
    // HTTP worker threads; with PostgreSQL as many database connections, so
    // that different jobs' requests run in parallel (SQLite has one: its
    // writers are serialised anyway).
    unsigned threads = 4;
    // How long a client may take to send a request, or sit idle between requests.
    std::chrono::milliseconds request_timeout{30000};
    // Requests answered 500 (a database error), at most one per 10 s; their
    // text, which may quote SQL, never goes in a response.
    std::function<void(const std::string&)> log;
};

class Server {
  public:
    // Opens the database; throws BsoError (zeus/bso/algorithm.hpp) naming it
    // and the fix when it cannot be opened or its schema is newer than ours.
    explicit Server(ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // "cannot listen on ADDRESS: REASON"; otherwise the bound port (the
    // system's pick for port 0).
    [[nodiscard]] Result<unsigned short> listen_tcp(const std::string& address);
    // Catches the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT), calls
    // `ready` (say where it listens there), then serves until one arrives and
    // returns its number; the database is closed when the Server is destroyed.
    int serve_until_signalled(const std::function<void()>& ready = {});

  private:
    struct Parts;
    std::unique_ptr<Parts> parts_;
};

}  // namespace zeus::bso
