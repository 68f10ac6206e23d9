#include "device/zeusd/fake_zeusd.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "http_server/percent_decode.hpp"
#include "http_server/server.hpp"

namespace zeus::testing {
namespace {

namespace hs = zeus::http_server;
using nlohmann::json;

// The parameters of each control route after gpu_ids, in zeusd's order.
const std::map<std::string, std::vector<std::string>>& control_routes() {
    static const std::map<std::string, std::vector<std::string>> routes = {
        {"/gpu/set_power_limit", {"power_limit_mw", "block"}},
        {"/gpu/set_persistence_mode", {"enabled", "block"}},
        {"/gpu/set_gpu_locked_clocks", {"min_clock_mhz", "max_clock_mhz", "block"}},
        {"/gpu/reset_gpu_locked_clocks", {"block"}},
        {"/gpu/set_mem_locked_clocks", {"min_clock_mhz", "max_clock_mhz", "block"}},
        {"/gpu/reset_mem_locked_clocks", {"block"}},
        {"/gpu/reset_locked_clocks", {"block"}},
    };
    return routes;
}

const std::set<std::string> kGpuReads = {"/gpu/get_cumulative_energy", "/gpu/get_power", "/gpu/get_power_limit",
                                         "/gpu/get_power_limit_constraints", "/gpu/get_persistence_mode"};

// A 400 with a plain-text body (actix's extractor errors) or a JSON one.
struct BadRequest {
    std::string body;
    bool json_body = false;
};

BadRequest query_error(const std::string& what) { return {"Query deserialize error: " + what, false}; }
BadRequest json_error(const std::string& message) { return {json{{"error", message}}.dump(), true}; }

hs::Response answer(int status, std::string body = "", std::string content_type = "application/json") {
    hs::Response response;
    response.status = static_cast<hs::http::status>(status);
    response.content_type = body.empty() ? "" : std::move(content_type);
    response.body = std::move(body);
    return response;
}

std::optional<std::string> group_of(const std::string& path) {
    if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) return "gpu-control";
    if (path.starts_with("/gpu/")) return "gpu-read";
    if (path.starts_with("/cpu/")) return "cpu-read";
    return std::nullopt;
}

bool listed(const json& array, const std::string& item) {
    return array.is_array() && std::find(array.begin(), array.end(), item) != array.end();
}

// Digits only (no sign, no space); nullopt past 2^64 - 1 too.
std::optional<std::uint64_t> digits_value(const std::string& text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n\f\v");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\r\n\f\v") - first + 1);
}

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Query pairs as a form decoder reads them: split on '&', blank values kept.
std::vector<std::pair<std::string, std::string>> query_pairs(const std::string& query) {
    std::vector<std::pair<std::string, std::string>> pairs;
    std::size_t start = 0;
    while (start <= query.size()) {
        const auto end = std::min(query.find('&', start), query.size());
        const auto part = query.substr(start, end - start);
        start = end + 1;
        if (part.empty()) continue;
        const auto eq = part.find('=');
        const auto name = part.substr(0, eq);
        const auto value = eq == std::string::npos ? std::string() : part.substr(eq + 1);
        pairs.emplace_back(hs::percent_decode(name).value_or(name), hs::percent_decode(value).value_or(value));
    }
    return pairs;
}

bool parse_bool(const std::map<std::string, std::string>& params, const std::string& name) {
    const auto it = params.find(name);
    if (it == params.end()) throw query_error("missing field `" + name + "`");
    if (it->second != "true" && it->second != "false") {
        throw query_error("provided string was not `true` or `false`");
    }
    return it->second == "true";
}

std::uint64_t parse_uint(const std::map<std::string, std::string>& params, const std::string& name) {
    const auto it = params.find(name);
    if (it == params.end()) throw query_error("missing field `" + name + "`");
    const auto value = digits_value(it->second);
    if (!value || *value > 0xFFFFFFFFULL) throw query_error("invalid digit found in string");
    return *value;
}

// Sorted, without repeats; nullopt when absent and not required.
std::optional<std::vector<std::uint64_t>> parse_ids(const std::map<std::string, std::string>& params,
                                                    const std::string& name, const std::string& kind, bool required) {
    const auto it = params.find(name);
    if (it == params.end()) {
        if (required) throw query_error("missing field `" + name + "`");
        return std::nullopt;
    }
    if (trimmed(it->second).empty()) throw json_error(name + " must contain at least one " + kind + " index");
    std::set<std::uint64_t> ids;
    std::size_t start = 0;
    while (start <= it->second.size()) {
        const auto end = std::min(it->second.find(',', start), it->second.size());
        const auto part = trimmed(it->second.substr(start, end - start));
        start = end + 1;
        if (part.empty()) throw json_error(name + " contains an empty " + kind + " index");
        const auto id = digits_value(part);
        if (!id) throw json_error("Invalid " + kind + " index: " + part);
        ids.insert(*id);
    }
    return std::vector<std::uint64_t>(ids.begin(), ids.end());
}

void deny_unknown(const std::vector<std::string>& names, const std::vector<std::string>& allowed) {
    for (const auto& name : names) {
        if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
        std::string expected;
        for (const auto& a : allowed) expected += (expected.empty() ? "`" : ", `") + a + "`";
        throw query_error("unknown field `" + name + "`, expected one of " + expected);
    }
}

// An event stream's subscribers; what is published goes to each.
class Channel : public hs::EventSource, public std::enable_shared_from_this<Channel> {
  public:
    std::unique_ptr<hs::EventSubscription> subscribe(hs::EventSink sink) override {
        const std::lock_guard lock(mutex_);
        const int id = next_id_++;
        sinks_.emplace(id, std::move(sink));
        return std::make_unique<Subscription>(shared_from_this(), id);
    }

    void publish(const std::string& data) const {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, sink] : sinks_) sink(data);
    }

    std::size_t size() const {
        const std::lock_guard lock(mutex_);
        return sinks_.size();
    }

  private:
    struct Subscription : hs::EventSubscription {
        Subscription(std::shared_ptr<Channel> owner, int sink_id) : channel(std::move(owner)), id(sink_id) {}
        Subscription(const Subscription&) = delete;
        Subscription& operator=(const Subscription&) = delete;
        ~Subscription() override {
            const std::lock_guard lock(channel->mutex_);
            channel->sinks_.erase(id);
        }
        std::shared_ptr<Channel> channel;
        int id;
    };

    mutable std::mutex mutex_;
    std::map<int, hs::EventSink> sinks_;
    int next_id_ = 0;
};

}  // namespace

// The routes and the state behind them, on a Server whose io runs on one thread.
class FakeZeusd::Daemon {
  public:
    explicit Daemon(json config) : config_(std::move(config)) {
        const auto power_limit = config_.value("power_limit_mw", json(200000));
        for (const auto& gpu : config_.value("gpus", json::array())) {
            const auto id = gpu.at("id").get<std::uint64_t>();
            power_limit_[id] = power_limit;
            persistence_[id] = true;
            gpu_energy_[id] = 1000 * (id + 1);
        }
        const auto cpu_start = config_.value("cpu_start_uj", json{{"cpu", 1000000}, {"dram", 500000}});
        for (const auto& cpu : config_.value("cpus", json::array())) cpu_energy_[cpu.at("id").get<std::uint64_t>()] = cpu_start;
        server_ = std::make_unique<hs::Server>(
            io_, [this](const hs::Request& request, const hs::Peer& peer, hs::Respond respond) {
                respond(handle(request, peer));
            },
            options());
    }

    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    ~Daemon() {
        server_->stop();
        work_.reset();
        io_.stop();
        if (thread_.joinable()) thread_.join();
        server_.reset();
    }

    Status listen_unix(const std::string& path) { return started(server_->listen_unix(path)); }

    // On `port` of 127.0.0.1 (0: one the kernel chooses).
    Result<std::uint16_t> listen_tcp(std::uint16_t port) {
        auto listening = server_->listen_tcp("127.0.0.1:" + std::to_string(port));
        if (!listening) return listening.error();
        if (auto s = started(Status{}); !s.ok()) return s.error();
        return *listening;
    }

    const std::shared_ptr<Channel>& channel(const std::string& path) const { return channels_.at(path); }

    std::vector<RecordedRequest> requests() const {
        const std::lock_guard lock(mutex_);
        return recorded_;
    }
    void clear_requests() {
        const std::lock_guard lock(mutex_);
        recorded_.clear();
    }

  private:
    static hs::ServerOptions options() {
        hs::ServerOptions options;
        options.name = "fake-zeusd";
        // Every event a test publishes reaches the client, however fast it publishes.
        options.limits.max_queued_events = 100'000;
        return options;
    }

    Status started(Status listening) {
        if (listening.ok()) thread_ = std::thread([this] { io_.run(); });
        return listening;
    }

    hs::Response handle(const hs::Request& request, const hs::Peer& peer) {
        const hs::TargetParts target = hs::split_target(request.target());
        RecordedRequest r;
        r.connection = static_cast<int>(peer.connection_id);
        r.method = std::string(request.method_string());
        r.path = std::string(target.path);
        r.query = std::string(target.query);
        for (auto& [name, value] : query_pairs(r.query)) {
            r.param_names.push_back(name);
            r.params[name] = value;
        }
        for (const auto& field : request) {
            std::string name(field.name_string());
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            r.headers[name] = std::string(field.value());
        }
        r.body = request.body();

        const std::lock_guard lock(mutex_);
        recorded_.push_back(r);
        try {
            return route(r);
        } catch (const BadRequest& e) {
            return answer(400, e.body, e.json_body ? "application/json" : "text/plain; charset=utf-8");
        }
    }

    // zeusd's order (§5.2): group enabled, auth enabled, token, scope. Sets
    // `claims` when a token was checked.
    std::optional<hs::Response> middleware(const RecordedRequest& r, json& claims) const {
        const auto group = group_of(r.path);
        if (group && !listed(config_.at("enabled_api_groups"), *group)) {
            return answer(404, json{{"error", "API group '" + *group + "' is not enabled on this server."}}.dump());
        }
        if (!config_.value("auth_required", false)) {
            if (r.path.starts_with("/auth/")) {
                return answer(404, json{{"error", "Authentication is not enabled on this server."}}.dump());
            }
            return std::nullopt;
        }
        if (r.path == "/discover" || r.path == "/time") return std::nullopt;
        const auto header = r.headers.find("authorization");
        if (header == r.headers.end() || !header->second.starts_with("Bearer ")) {
            auto response = answer(
                401,
                json{{"error", "Authentication required. Provide an Authorization: Bearer <token> header."}}.dump());
            response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"zeusd\"");
            return response;
        }
        const auto tokens = config_.value("tokens", json::object());
        const auto token = tokens.find(header->second.substr(std::string("Bearer ").size()));
        if (token == tokens.end()) return answer(401, json{{"error", "Invalid token: InvalidSignature"}}.dump());
        if (token->value("expired", false)) return answer(401, json{{"error", "Token has expired."}}.dump());
        if (group && !listed(token->at("scopes"), *group)) {
            std::string scopes;
            for (const auto& s : token->at("scopes")) scopes += (scopes.empty() ? "'" : ", '") + s.get<std::string>() + "'";
            return answer(403, json{{"error", "Token for user '" + token->at("sub").get<std::string>() +
                                                  "' lacks required scope '" + *group + "'. Token scopes: [" + scopes +
                                                  "]"}}
                                   .dump());
        }
        claims = *token;
        return std::nullopt;
    }

    hs::Response route(const RecordedRequest& r) {
        json claims;
        if (auto denied = middleware(r, claims)) return std::move(*denied);
        const auto responses = config_.value("responses", json::object());
        if (const auto forced = responses.find(r.method + " " + r.path); forced != responses.end()) {
            return answer(forced->at("status").get<int>(), forced->value("body", ""),
                          forced->value("content_type", "application/json"));
        }
        if (r.method == "GET" && r.path == "/discover") {
            if (config_.contains("discover_raw")) return answer(200, config_.at("discover_raw").dump());
            return answer(200, json{{"gpus", config_.value("gpus", json::array())},
                                    {"cpus", config_.value("cpus", json::array())},
                                    {"enabled_api_groups", config_.value("enabled_api_groups", json::array())},
                                    {"auth_required", config_.value("auth_required", false)}}
                                   .dump());
        }
        if (r.method == "GET" && r.path == "/time") return answer(200, json{{"timestamp_ms", now_ms()}}.dump());
        if (r.method == "GET" && r.path == "/auth/whoami") {
            json whoami{{"sub", claims.at("sub")}, {"scopes", claims.at("scopes")}};
            if (claims.contains("exp")) whoami["exp"] = claims.at("exp");
            return answer(200, whoami.dump());
        }
        if (r.method == "POST" && control_routes().contains(r.path)) return control(r);
        if (r.method == "GET" && kGpuReads.contains(r.path)) return gpu_read(r);
        if (r.method == "GET" && r.path == "/cpu/get_cumulative_energy") return cpu_energy(r);
        if (r.method == "GET" && r.path == "/cpu/get_power") return cpu_power(r);
        if (r.method == "GET" && r.path == "/gpu/stream_power") {
            deny_unknown(r.param_names, {"gpu_ids"});
            (void)selected(r, "gpu_ids", "GPU", config_.value("gpus", json::array()));
            return hs::Response::event_stream(channels_.at(r.path));
        }
        if (r.method == "GET" && r.path == "/cpu/stream_power") {
            deny_unknown(r.param_names, {"cpu_ids"});
            (void)selected(r, "cpu_ids", "CPU", config_.value("cpus", json::array()));
            return hs::Response::event_stream(channels_.at(r.path));
        }
        return answer(404);
    }

    hs::Response control(const RecordedRequest& r) {
        const auto& names = control_routes().at(r.path);
        std::vector<std::string> allowed = {"gpu_ids"};
        allowed.insert(allowed.end(), names.begin(), names.end());
        deny_unknown(r.param_names, allowed);
        const auto ids = *parse_ids(r.params, "gpu_ids", "GPU", true);
        std::map<std::string, std::uint64_t> values;
        for (const auto& name : names) {
            values[name] = name == "block" || name == "enabled" ? parse_bool(r.params, name) : parse_uint(r.params, name);
        }
        for (const auto gpu : ids) {
            if (!power_limit_.contains(gpu)) throw BadRequest{"GPU index " + std::to_string(gpu) + " does not exist."};
        }
        for (const auto gpu : ids) {
            if (r.path == "/gpu/set_power_limit") power_limit_[gpu] = values.at("power_limit_mw");
            if (r.path == "/gpu/set_persistence_mode") persistence_[gpu] = values.at("enabled") != 0;
        }
        return answer(200);
    }

    // The ids asked for, or every device of `kind` in the configuration.
    std::vector<std::uint64_t> selected(const RecordedRequest& r, const std::string& name, const std::string& kind,
                                        const json& devices) const {
        std::vector<std::uint64_t> known;
        for (const auto& device : devices) known.push_back(device.at("id").get<std::uint64_t>());
        auto ids = parse_ids(r.params, name, kind, false);
        if (!ids) return known;
        for (const auto id : *ids) {
            if (std::find(known.begin(), known.end(), id) == known.end()) {
                throw json_error(kind + " " + std::to_string(id) + " not found");
            }
        }
        return *ids;
    }

    hs::Response gpu_read(const RecordedRequest& r) {
        deny_unknown(r.param_names, {"gpu_ids"});
        const auto ids = selected(r, "gpu_ids", "GPU", config_.value("gpus", json::array()));
        json out = json::object();
        if (r.path == "/gpu/get_power") {
            out["timestamp_ms"] = now_ms();
            out["power_mw"] = json::object();
        }
        for (const auto gpu : ids) {
            const auto key = std::to_string(gpu);
            if (r.path == "/gpu/get_cumulative_energy") {
                gpu_energy_[gpu] += 1000;
                out[key] = {{"energy_mj", gpu_energy_[gpu]}};
            } else if (r.path == "/gpu/get_power") {
                out["power_mw"][key] = 75000 + 1000 * gpu;
            } else if (r.path == "/gpu/get_power_limit") {
                out[key] = {{"power_limit_mw", power_limit_[gpu]}};
            } else if (r.path == "/gpu/get_power_limit_constraints") {
                out[key] = {{"min_power_limit_mw", 100000}, {"max_power_limit_mw", 300000}};
            } else {
                out[key] = {{"enabled", persistence_[gpu]}};
            }
        }
        return answer(200, out.dump());
    }

    bool dram_available(std::uint64_t cpu) const {
        for (const auto& c : config_.at("cpus")) {
            if (c.at("id").get<std::uint64_t>() == cpu) return c.at("dram_available").get<bool>();
        }
        return false;
    }

    hs::Response cpu_energy(const RecordedRequest& r) {
        deny_unknown(r.param_names, {"cpu_ids", "cpu", "dram"});
        const auto ids = selected(r, "cpu_ids", "CPU", config_.value("cpus", json::array()));
        const bool want_cpu = parse_bool(r.params, "cpu");
        const bool want_dram = parse_bool(r.params, "dram");
        const auto step = config_.value("cpu_step_uj", json{{"cpu", 2000000}, {"dram", 300000}});
        ++cpu_reads_;
        if (config_.contains("cpu_restart_at_read") && config_.at("cpu_restart_at_read").get<int>() == cpu_reads_) {
            for (auto& [cpu, counters] : cpu_energy_) counters = {{"cpu", 0}, {"dram", 0}};  // a restarted daemon
        }
        json out = json::object();
        for (const auto cpu : ids) {
            auto& counters = cpu_energy_[cpu];
            counters["cpu"] = counters.at("cpu").get<std::int64_t>() + step.at("cpu").get<std::int64_t>();
            counters["dram"] = counters.at("dram").get<std::int64_t>() + step.at("dram").get<std::int64_t>();
            out[std::to_string(cpu)] = {
                {"cpu_energy_uj", want_cpu ? counters.at("cpu") : json(nullptr)},
                {"dram_energy_uj", want_dram && dram_available(cpu) ? counters.at("dram") : json(nullptr)}};
        }
        return answer(200, out.dump());
    }

    hs::Response cpu_power(const RecordedRequest& r) const {
        deny_unknown(r.param_names, {"cpu_ids"});
        const auto ids = selected(r, "cpu_ids", "CPU", config_.value("cpus", json::array()));
        json power = json::object();
        for (const auto cpu : ids) {
            power[std::to_string(cpu)] = {{"cpu_mw", 85000 + cpu},
                                          {"dram_mw", dram_available(cpu) ? json(12000) : json(nullptr)}};
        }
        return answer(200, json{{"timestamp_ms", now_ms()}, {"power_mw", power}}.dump());
    }

    const json config_;
    mutable std::mutex mutex_;  // the state below; the test thread reads and clears the record
    std::vector<RecordedRequest> recorded_;
    std::map<std::uint64_t, json> power_limit_;
    std::map<std::uint64_t, bool> persistence_;
    std::map<std::uint64_t, std::uint64_t> gpu_energy_;
    std::map<std::uint64_t, json> cpu_energy_;
    int cpu_reads_ = 0;
    const std::map<std::string, std::shared_ptr<Channel>> channels_ = {
        {"/gpu/stream_power", std::make_shared<Channel>()}, {"/cpu/stream_power", std::make_shared<Channel>()}};

    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
    std::unique_ptr<hs::Server> server_;
    std::thread thread_;
};

nlohmann::json FakeZeusd::default_config() {
    return {
        {"gpus",
         {{{"id", 0}, {"name", "NVIDIA A100-SXM4-40GB"}, {"pci_address", "0000:01:00.0"}, {"cumulative_energy_available", true}},
          {{"id", 1}, {"name", "NVIDIA A100-SXM4-40GB"}, {"pci_address", "0000:02:00.0"}, {"cumulative_energy_available", true}}}},
        {"cpus", {{{"id", 0}, {"dram_available", true}}, {{"id", 1}, {"dram_available", false}}}},
        {"enabled_api_groups", {"gpu-control", "gpu-read", "cpu-read"}},
        {"auth_required", false},
    };
}

FakeZeusd::FakeZeusd(const nlohmann::json& config, Listen listen) : config_(config), listen_(listen) {
    static std::atomic<int> counter{0};
    // Short: a Unix socket path must fit in 108 bytes.
    dir_ = std::filesystem::temp_directory_path() /
           ("zfz-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    socket_ = dir_ / "zeusd.sock";
    open_listener();
}

void FakeZeusd::open_listener() {
    daemon_ = std::make_unique<Daemon>(config_);
    if (listen_ == Listen::UnixSocket) {
        const auto listening = daemon_->listen_unix(socket_.string());
        if (!listening.ok()) ADD_FAILURE() << "fake zeusd could not listen: " << listening.error().describe();
    } else {
        const auto port = daemon_->listen_tcp(port_);
        if (port.ok()) port_ = *port;
        else ADD_FAILURE() << "fake zeusd could not listen: " << port.error().describe();
    }
}

void FakeZeusd::stop() {
    daemon_.reset();
    std::error_code ignored;
    std::filesystem::remove(socket_, ignored);
}

void FakeZeusd::restart() {
    stop();
    open_listener();
}

void FakeZeusd::publish(const std::string& path, const std::string& data) const {
    daemon_->channel(path)->publish(data);
}

std::size_t FakeZeusd::subscribers(const std::string& path) const {
    return daemon_ ? daemon_->channel(path)->size() : 0;
}

FakeZeusd::~FakeZeusd() {
    daemon_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

ZeusdConfig FakeZeusd::client_config(std::optional<std::string> token) const {
    if (listen_ == Listen::UnixSocket) return ZeusdConfig::unix_socket(socket_.string(), std::move(token));
    return ZeusdConfig::tcp("127.0.0.1", port_, std::move(token));
}

std::string FakeZeusd::environment() const {
    if (listen_ == Listen::UnixSocket) return "ZEUSD_SOCK_PATH=" + socket_.string();
    return "ZEUSD_HOST_PORT=127.0.0.1:" + std::to_string(port_);
}

std::vector<RecordedRequest> FakeZeusd::requests() const { return daemon_->requests(); }

std::vector<RecordedRequest> FakeZeusd::requests(const std::string& path) const {
    std::vector<RecordedRequest> out;
    for (auto& r : requests()) {
        if (r.path == path) out.push_back(std::move(r));
    }
    return out;
}

void FakeZeusd::clear_requests() const { daemon_->clear_requests(); }

}  // namespace zeus::testing
