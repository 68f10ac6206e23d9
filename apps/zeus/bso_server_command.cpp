// `zeus bso-server`: the batch-size optimizer server, the original's REST API
// (docs/batch-size-optimizer.md) over the project's HTTP server component,
// with its state in SQLite (a file, the default) or PostgreSQL.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "option_checks.hpp"
#include "server_listen.hpp"
#include "zeus/bso/algorithm.hpp"
#include "zeus/bso/server.hpp"

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
    bso::ServerOptions options;
    if (!flags.database.empty()) {
        options.database = flags.database;
    } else if (const char* env = std::getenv("ZEUS_BSO_DATABASE_URL"); env && *env) {
        if (std::string url = from_sqlalchemy_url(env); !url.empty()) options.database = url;
    }
    options.threads = flags.threads;
    options.request_timeout = request_timeout(flags.request_timeout_s);
    options.log = [](const std::string& message) { std::cerr << "zeus bso-server: " << message << "\n"; };
    std::unique_ptr<bso::Server> server;
    try {
        server = std::make_unique<bso::Server>(options);
    } catch (const bso::BsoError& e) {
        std::cerr << "zeus bso-server: " << e.what() << "\n";
        return 2;
    }
    const auto address = listening(server->listen_tcp(flags.listen), flags.listen, "zeus bso-server", 8000);
    if (!address) return 2;
    const bool postgresql = options.database.starts_with("postgres");
    const int signal = server->serve_until_signalled([&] {
        std::cerr << fmt::format("zeus bso-server: listening on {} with the {} database{}\n", *address,
                                 postgresql ? "PostgreSQL" : "SQLite", postgresql ? "" : " '" + options.database + "'");
    });
    server.reset();  // closes the database before the last line
    say_stopped("zeus bso-server", signal);
    return 0;
}

}  // namespace

Command add_bso_server(CLI::App& parent) {
    auto flags = std::make_shared<BsoServerFlags>();
    auto* app = parent.add_subcommand("bso-server", "Serve the batch-size optimizer's REST API (Zeus's BSO server)");
    app->add_option("--database", flags->database,
                    "SQLite file path (default zeus-bso.db, or $ZEUS_BSO_DATABASE_URL) or postgresql://user@host:port/db");
    app->add_option("--listen", flags->listen, kListenHelp)->capture_default_str();
    app->add_option("--threads", flags->threads, "HTTP worker threads")->capture_default_str()->check(whole_number(1, 256));
    add_request_timeout_option(*app, flags->request_timeout_s);
    return [flags] { return run_bso_server(*flags); };
}

}  // namespace zeus::cli
