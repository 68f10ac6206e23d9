// A local HTTP server on loopback (the project's HTTP server component) that
// answers like ElectricityMaps and OpenEI from the recorded answers in
// data/carbon/, so provider and monitor tests never reach the internet.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "http_server/percent_decode.hpp"
#include "http_server/server.hpp"
#include "support/build_paths.hpp"

namespace zeus::carbon::testing {

using Query = std::map<std::string, std::string>;
using Route = std::function<http_server::Response(const Query& query, const http_server::Request& request)>;

inline nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
}

inline std::string data_file(const std::string& name) { return zeus::testing::data_dir() + "/carbon/" + name; }

// The recorded OpenEI answer's rate of `label` for the UTC hour starting at
// `hour`: its weekday or weekend schedule, month and hour, the test's own lookup.
// -1 when the label is not there.
inline double openei_recorded_rate(const nlohmann::json& rates, const std::string& label,
                                   std::chrono::sys_seconds hour) {
    for (const auto& item : rates["items"]) {
        if (item["label"] != label) continue;
        const auto day = std::chrono::floor<std::chrono::days>(hour);
        const unsigned month = static_cast<unsigned>(std::chrono::year_month_day(day).month());
        const unsigned weekday = std::chrono::weekday(day).c_encoding();
        const auto h = static_cast<std::size_t>((hour - day) / std::chrono::hours(1));
        const auto& schedule =
            (weekday == 0 || weekday == 6) ? item["energyweekendschedule"] : item["energyweekdayschedule"];
        const auto& tier = item["energyratestructure"][schedule[month - 1][h].get<std::size_t>()][0];
        return tier["rate"].get<double>() + tier.value("adj", 0.0);
    }
    return -1;
}

class ReplayServer {
  public:
    ReplayServer() {
        server_ = std::make_unique<http_server::Server>(
            io_, [this](const http_server::Request& r, const http_server::Peer&, http_server::Respond respond) {
                respond(handle(r));
            });
        const auto port = server_->listen_tcp("127.0.0.1:0");
        if (!port) throw std::runtime_error("no loopback port to listen on: " + port.error().describe());
        port_ = *port;
        thread_ = std::thread([this] { io_.run(); });
    }
    ~ReplayServer() { stop(); }
    ReplayServer(const ReplayServer&) = delete;
    ReplayServer& operator=(const ReplayServer&) = delete;

    // Stops listening and answering: the provider finds nobody there.
    void stop() {
        if (server_) server_->stop();
        work_.reset();
        io_.stop();
        if (thread_.joinable()) thread_.join();
        server_.reset();
    }

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    // A loopback address nobody listens on: connections are refused at once.
    [[nodiscard]] static std::string dead_url() { return "http://127.0.0.1:" + std::to_string(unused_port()); }

    void on(const std::string& path, Route route) {
        std::lock_guard lock(mutex_);
        routes_[path] = std::move(route);
    }
    [[nodiscard]] int requests(const std::string& path) {
        std::lock_guard lock(mutex_);
        return counts_[path];
    }

  private:
    [[nodiscard]] static int unused_port() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        int port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
            port = ntohs(addr.sin_port);
        }
        ::close(fd);
        return port;
    }

    http_server::Response handle(const http_server::Request& request) {
        const http_server::TargetParts target = http_server::split_target(request.target());
        const std::string path(target.path);
        Query query;
        {
            std::string rest(target.query);
            while (!rest.empty()) {
                const auto amp = rest.find('&');
                const std::string pair = rest.substr(0, amp);
                const auto eq = pair.find('=');
                query[pair.substr(0, eq)] =
                    eq == std::string::npos ? "" : http_server::percent_decode(pair.substr(eq + 1)).value_or("");
                rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
            }
        }
        Route route;
        {
            std::lock_guard lock(mutex_);
            ++counts_[path];
            if (const auto it = routes_.find(path); it != routes_.end()) route = it->second;
        }
        if (!route) return http_server::Response::json(R"({"error":"no such route"})", http_server::http::status::not_found);
        return route(query, request);
    }

    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
        boost::asio::make_work_guard(io_);
    std::unique_ptr<http_server::Server> server_;
    std::thread thread_;
    int port_ = 0;
    std::mutex mutex_;
    std::map<std::string, Route> routes_;
    std::map<std::string, int> counts_;
};

// The recorded ElectricityMaps history `file`, moved in time by whole hours
// so that its last entry is `last_hour` (UTC), as the API would answer then.
inline nlohmann::json shifted_history(const std::string& file, std::chrono::sys_seconds last_hour);

// "2024-12-01T05:00:00.000Z" <-> sys_seconds, for the tests' own bookkeeping.
inline std::chrono::sys_seconds parse_recorded_time(const std::string& text) {
    std::tm tm{};
    if (::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) throw std::runtime_error("bad time " + text);
    return std::chrono::sys_seconds(std::chrono::seconds(::timegm(&tm)));
}
inline std::string recorded_time_text(std::chrono::sys_seconds t) {
    const std::time_t tt = t.time_since_epoch().count();
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char buffer[40];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
    return buffer;
}

inline nlohmann::json shifted_history(const std::string& file, std::chrono::sys_seconds last_hour) {
    nlohmann::json doc = read_json(data_file(file));
    auto& history = doc["history"];
    const auto shift = last_hour - parse_recorded_time(history.back()["datetime"].get<std::string>());
    for (auto& entry : history) {
        entry["datetime"] = recorded_time_text(parse_recorded_time(entry["datetime"].get<std::string>()) + shift);
    }
    return doc;
}

}  // namespace zeus::carbon::testing
