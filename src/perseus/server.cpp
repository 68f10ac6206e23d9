#include "zeus/perseus/server.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http_server/serve.hpp"
#include "http_server/server.hpp"
#include "perseus/job_manager.hpp"
#include "perseus/router.hpp"

namespace zeus::perseus {

namespace {

// The original's cleanup task: every `period`, forget the jobs idle too long.
void schedule_cleanup(boost::asio::steady_timer& timer, JobManager& jobs, std::chrono::seconds period,
                      const std::function<void(const std::string&)>& log) {
    timer.expires_after(period);
    timer.async_wait([&timer, &jobs, period, &log](const boost::system::error_code& error) {
        if (error) return;
        if (const auto evicted = jobs.evict_idle(JobManager::Clock::now()); evicted && log)
            log(fmt::format("forgot {} idle job(s)", evicted));
        schedule_cleanup(timer, jobs, period, log);
    });
}

http_server::ServerOptions http_options(const ServerOptions& options) {
    http_server::ServerOptions http;
    http.name = options.name;
    // A ProfilingResult holds every instruction's time per iteration.
    http.limits.body_limit = 16 * 1024 * 1024;
    http.limits.request_timeout = options.request_timeout;
    return http;
}

}  // namespace

struct Server::Parts {
    explicit Parts(ServerOptions options)
        : log(std::move(options.log)),
          jobs(options.settings, log),
          router(jobs),
          server(
              io,
              [this](const http_server::Request& request, const http_server::Peer&, http_server::Respond respond) {
                  router.handle(request, respond);
              },
              http_options(options)),
          cleanup_period(std::min<std::chrono::seconds>(std::chrono::seconds(60), options.settings.max_job_idle_time)),
          thread_count(std::max(1U, options.threads)) {}

    ~Parts() {
        if (threads.empty()) return;
        server.stop();
        work.reset();
        io.stop();
        for (auto& thread : threads) thread.join();
    }

    std::function<void(const std::string&)> log;
    boost::asio::io_context io;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
    JobManager jobs;
    Router router;
    http_server::Server server;
    boost::asio::steady_timer cleanup{io};
    std::chrono::seconds cleanup_period;
    unsigned thread_count;
    std::vector<std::thread> threads;
};

Server::Server(ServerOptions options) : parts_(std::make_unique<Parts>(std::move(options))) {}

Server::~Server() = default;

Result<unsigned short> Server::listen_tcp(const std::string& address) { return parts_->server.listen_tcp(address); }

int Server::serve_until_signalled(const std::function<void()>& ready) {
    schedule_cleanup(parts_->cleanup, parts_->jobs, parts_->cleanup_period, parts_->log);
    return http_server::serve_until_signalled(parts_->io, parts_->server, parts_->thread_count, ready);
}

void Server::start() {
    parts_->work.emplace(parts_->io.get_executor());
    schedule_cleanup(parts_->cleanup, parts_->jobs, parts_->cleanup_period, parts_->log);
    for (unsigned i = 0; i < parts_->thread_count; ++i) parts_->threads.emplace_back([this] { parts_->io.run(); });
}

}  // namespace zeus::perseus
