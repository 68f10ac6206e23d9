#include "zeus/bso/server.hpp"

#include <algorithm>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "bso/database.hpp"
#include "bso/router.hpp"
#include "bso/service.hpp"
#include "http_server/serve.hpp"
#include "http_server/server.hpp"

namespace zeus::bso {

namespace {

std::unique_ptr<Service> open_service(const ServerOptions& options) {
    std::vector<std::unique_ptr<Database>> pool;
    const bool parallel = options.database.starts_with("postgres");
    for (unsigned i = 0; i < (parallel ? std::max(1U, options.threads) : 1U); ++i)
        pool.push_back(Database::open(options.database));
    return std::make_unique<Service>(std::move(pool));
}

http_server::ServerOptions http_options(const ServerOptions& options) {
    http_server::ServerOptions http;
    http.name = "zeus-bso-server";
    http.limits.request_timeout = options.request_timeout;
    return http;
}

}  // namespace

struct Server::Parts {
    explicit Parts(const ServerOptions& options)
        : service(open_service(options)),
          router(*service,
                 [log = options.log](http_server::LogLevel, const std::string& message) {
                     if (log) log(message);
                 }),
          server(
              io,
              [this](const http_server::Request& request, const http_server::Peer&, http_server::Respond respond) {
                  respond(router.handle(request));
              },
              http_options(options)),
          threads(options.threads) {}

    std::unique_ptr<Service> service;
    Router router;
    boost::asio::io_context io;
    http_server::Server server;
    unsigned threads;
};

Server::Server(ServerOptions options) : parts_(std::make_unique<Parts>(options)) {}

Server::~Server() = default;

Result<unsigned short> Server::listen_tcp(const std::string& address) { return parts_->server.listen_tcp(address); }

int Server::serve_until_signalled(const std::function<void()>& ready) {
    return http_server::serve_until_signalled(parts_->io, parts_->server, parts_->threads, ready);
}

}  // namespace zeus::bso
