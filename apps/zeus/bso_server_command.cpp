// `zeus bso-server`: the batch-size optimizer server, the original's REST API
// (docs/batch-size-optimizer.md) over the project's HTTP server component,
// with its state in SQLite (a file, the default) or PostgreSQL.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "bso/router.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "http_server/serve.hpp"
#include "server_listen.hpp"
#include "http_server/server.hpp"

namespace zeus::cli {
namespace {

// The original's ZEUS_BSO_DATABASE_URL is an SQLAlchemy URL; its SQLite and
// PostgreSQL forms name the same databases here.
std::string from_sqlalchemy_url(const std::string& url) {
    for (const char* prefix : {"sqlite+aiosqlite:///", "sqlite:///"})
        if (url.starts_with(prefix)) return url.substr(std::string(prefix).size());
    for (const char* prefix : {"postgresql+asyncpg://", "postgresql+psycopg://", "postgresql+psycopg2://"})
        if (url.starts_with(prefix)) return "postgresql://" + url.substr(std::string(prefix).size());
    return url;
}

struct BsoServerFlags {
    std::string database;
    std::string listen = "127.0.0.1:8000";
    unsigned threads = 4;  // more than cores: a request waits on the database (PostgreSQL round trips)
    double request_timeout_s = 30;
};

int run_bso_server(const BsoServerFlags& flags) {
    std::string database = flags.database;
    if (database.empty()) {
        if (const char* env = std::getenv("ZEUS_BSO_DATABASE_URL"); env && *env) database = from_sqlalchemy_url(env);
    }
    if (database.empty()) database = "zeus-bso.db";
    std::unique_ptr<bso::Service> service;
    try {
        // PostgreSQL: one connection per HTTP thread, so different jobs' requests
        // run in parallel. SQLite: one; its writers are serialised anyway.
        std::vector<std::unique_ptr<bso::Database>> pool;
        const bool parallel = database.starts_with("postgres");
        for (unsigned i = 0; i < (parallel ? std::max(1U, flags.threads) : 1U); ++i) pool.push_back(bso::Database::open(database));
        service = std::make_unique<bso::Service>(std::move(pool));
    } catch (const bso::BsoError& e) {
        std::cerr << "zeus bso-server: " << e.what() << "\n";
        return 2;
    }
    bso::Router router(*service, [](http_server::LogLevel, const std::string& message) {
        std::cerr << "zeus bso-server: " << message << "\n";
    });
    boost::asio::io_context io;
    http_server::ServerOptions options;
    options.name = "zeus-bso-server";
    options.limits.request_timeout = request_timeout(flags.request_timeout_s);
    http_server::Server server(
        io, [&router](const http_server::Request& request, const http_server::Peer&, http_server::Respond respond) {
            respond(router.handle(request));
        },
        options);
    if (!listen_on(server, flags.listen, "zeus bso-server", 8000)) return 2;
    const bool postgresql = database.starts_with("postgres");
    std::cerr << fmt::format("zeus bso-server: listening on {} with the {} database{}\n", flags.listen,
                             postgresql ? "PostgreSQL" : "SQLite", postgresql ? "" : " '" + database + "'");
    http_server::serve_until_signalled(io, server, flags.threads);
    return 0;
}

}  // namespace

Command add_bso_server(CLI::App& parent) {
    auto flags = std::make_shared<BsoServerFlags>();
    auto* app = parent.add_subcommand("bso-server", "Serve the batch-size optimizer's REST API (Zeus's BSO server)");
    app->add_option("--database", flags->database,
                    "SQLite file path (default zeus-bso.db, or $ZEUS_BSO_DATABASE_URL) or postgresql://user@host:port/db");
    app->add_option("--listen", flags->listen, "TCP address to listen on, HOST:PORT")->capture_default_str();
    app->add_option("--threads", flags->threads, "HTTP worker threads")->capture_default_str()->check(whole_number(1, 256));
    add_request_timeout_option(*app, flags->request_timeout_s);
    return [flags] { return run_bso_server(*flags); };
}

}  // namespace zeus::cli
