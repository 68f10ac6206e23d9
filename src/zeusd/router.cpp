#include "zeusd/router.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include <pwd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "zeusd/auth/access_policy.hpp"
#include "zeusd/log.hpp"
#include "zeusd/query.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

std::uint64_t now_ms() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

// Per-device failures as the original aggregates them: {"errors": {id: msg}}
// with the worst status.
class ErrorCollector {
  public:
    void add(unsigned id, const Error& error) {
        errors_[std::to_string(id)] = error.describe();
        const auto code = status_for(error);
        if (static_cast<unsigned>(code) > static_cast<unsigned>(status_)) status_ = code;
    }
    [[nodiscard]] bool empty() const { return errors_.empty(); }
    [[nodiscard]] Response response() const { return Response::json(json_text(json{{"errors", errors_}}), status_); }

  private:
    json errors_ = json::object();
    http::status status_ = http::status::bad_request;
};

std::string debug_list(const std::vector<unsigned>& ids) { return fmt::format("[{}]", fmt::join(ids, ", ")); }

std::vector<unsigned> all_ids(std::size_t count) {
    std::vector<unsigned> ids(count);
    for (unsigned i = 0; i < count; ++i) ids[i] = i;
    return ids;
}

}  // namespace

http::status status_for(const Error& error) {
    switch (error.code) {
        case ErrorCode::NoPermission: return http::status::forbidden;
        case ErrorCode::InvalidArgument:
        case ErrorCode::NotSupported:
        case ErrorCode::NotFound: return http::status::bad_request;
        default: return http::status::internal_server_error;
    }
}

struct Router::Context {
    const Request& request;
    const Peer& peer;
    RequestTarget target;
    Respond respond;
    std::optional<Claims> claims;
};

Router::Router(RouterOptions options, GpuFleet* gpus, CpuFleet* cpus, boost::asio::any_io_executor executor,
               std::function<ClientId(const Peer&)> identify_client, PowerStreams* streams)
    : options_(std::move(options)),
      gpus_(gpus),
      cpus_(cpus),
      streams_(streams),
      executor_(std::move(executor)),
      identify_client_(std::move(identify_client)) {}

void Router::handle(const Request& request, const Peer& peer, Respond respond) const {
    auto target = parse_target(request.target());
    if (!target) {
        respond(Response::text(http::status::bad_request, "Bad request target: invalid percent-encoding"));
        return;
    }
    std::optional<std::string_view> authorization;
    if (const auto header = request.find(http::field::authorization); header != request.end()) {
        authorization = header->value();
    }
    auto decision = check_access(target->path, options_.enabled, options_.signing_key, authorization, unix_now());
    if (auto* rejected = std::get_if<Rejected>(&decision)) {
        Response response = Response::json(std::move(rejected->body), static_cast<http::status>(rejected->status));
        if (rejected->www_authenticate) {
            response.headers.emplace_back(std::string(kWwwAuthenticateHeader), std::string(kWwwAuthenticateValue));
        }
        respond(std::move(response));
        return;
    }

    struct Entry {
        http::verb method;
        Handler handler;
        ApiGroup group;
        bool always = false;
    };
    static const std::map<std::string, Entry, std::less<>> routes = {
        {"/discover", {http::verb::get, &Router::discover, ApiGroup::GpuRead, true}},
        {"/time", {http::verb::get, &Router::time, ApiGroup::GpuRead, true}},
        {"/auth/whoami", {http::verb::get, &Router::whoami, ApiGroup::GpuRead, true}},
        {"/gpu/set_power_limit", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/set_persistence_mode", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/set_gpu_locked_clocks", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/reset_gpu_locked_clocks", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/set_mem_locked_clocks", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/reset_mem_locked_clocks", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/reset_locked_clocks", {http::verb::post, &Router::gpu_control, ApiGroup::GpuControl}},
        {"/gpu/get_cumulative_energy", {http::verb::get, &Router::gpu_read, ApiGroup::GpuRead}},
        {"/gpu/get_power", {http::verb::get, &Router::gpu_read, ApiGroup::GpuRead}},
        {"/gpu/get_power_limit", {http::verb::get, &Router::gpu_read, ApiGroup::GpuRead}},
        {"/gpu/get_power_limit_constraints", {http::verb::get, &Router::gpu_read, ApiGroup::GpuRead}},
        {"/gpu/get_persistence_mode", {http::verb::get, &Router::gpu_read, ApiGroup::GpuRead}},
        {"/gpu/stream_power", {http::verb::get, &Router::gpu_stream, ApiGroup::GpuRead}},
        {"/cpu/get_cumulative_energy", {http::verb::get, &Router::cpu_energy, ApiGroup::CpuRead}},
        {"/cpu/get_power", {http::verb::get, &Router::cpu_power, ApiGroup::CpuRead}},
        {"/cpu/stream_power", {http::verb::get, &Router::cpu_stream, ApiGroup::CpuRead}},
        {"/metrics", {http::verb::get, &Router::metrics, ApiGroup::Metrics}},
    };
    const auto route = routes.find(target->path);
    if (route == routes.end() || (!route->second.always && !options_.enabled.contains(route->second.group))) {
        respond(error_response(http::status::not_found, fmt::format("No route for {}", target->path)));
        return;
    }
    if (request.method() != route->second.method) {
        respond(error_response(http::status::method_not_allowed,
                                fmt::format("{} takes {} requests, not {}", target->path,
                                            http::to_string(route->second.method), request.method_string())));
        return;
    }
    Context context{request, peer, std::move(*target), std::move(respond), std::get<Allowed>(decision).claims};
    (this->*route->second.handler)(context);
}

std::size_t Router::cpu_count() const { return cpus_ != nullptr ? cpus_->size() : 0; }

void Router::discover(Context& context) const {
    json gpus = json::array();
    if (gpus_ != nullptr) {
        for (const auto& gpu : gpus_->info()) {
            gpus.push_back({{"id", gpu.id},
                            {"name", gpu.name},
                            {"pci_address", gpu.pci_address},
                            {"cumulative_energy_available", gpu.cumulative_energy_available}});
        }
    }
    json cpus = json::array();
    if (cpus_ != nullptr) {
        for (const auto& cpu : cpus_->info()) cpus.push_back({{"id", cpu.id}, {"dram_available", cpu.dram_available}});
    }
    json groups = json::array();
    for (const auto group : options_.enabled) groups.push_back(to_string(group));
    context.respond(Response::json(json_text(json{{"gpus", gpus},
                                                  {"cpus", cpus},
                                                  {"enabled_api_groups", groups},
                                                  {"auth_required", options_.signing_key.has_value()}})));
}

void Router::time(Context& context) const {
    context.respond(Response::json(json_text(json{{"timestamp_ms", now_ms()}})));
}

void Router::whoami(Context& context) const {
    if (!context.claims) {
        context.respond(error_response(http::status::not_found, "Authentication is not enabled on this server."));
        return;
    }
    context.respond(Response::json(whoami_body(*context.claims)));
}

// What one GPU control request asks for, once its query has been checked.
struct Router::GpuControlRequest {
    ControlCommand base;  // all but the GPU
    std::vector<unsigned> ids;
    bool block = false;
    bool persist = false;
};

namespace {

// A curl user learns from the answer, not the docs, that a short-lived
// client's change does not outlive it. nullopt for the resets.
std::optional<std::string> restore_note(GpuCommand kind, bool persist, const Peer& peer, ClientId client) {
    if (kind != GpuCommand::SetPowerLimit && kind != GpuCommand::SetPersistenceMode &&
        kind != GpuCommand::SetGpuLockedClocks && kind != GpuCommand::SetMemLockedClocks) {
        return std::nullopt;
    }
    if (persist) return std::string("kept: persist=true, zeusd will not undo this change");
    if (client > 0) {
        return fmt::format(
            "undone when client pid {} exits (or zeusd stops); add persist=true to the query to "
            "keep it",
            client);
    }
    if (client < 0) {
        return fmt::format(
            "undone when the client ({}) exits (or zeusd stops); add persist=true to the query to keep it",
            peer.describe());
    }
    return std::string("undone when zeusd stops; add persist=true to the query to keep it");
}

// The command a route names and the query parameters it accepts.
std::span<const std::string_view> control_command_of(std::string_view name, ControlCommand& base) {
    // `persist` is ours: keep the change when the client goes away.
    static constexpr std::array<std::string_view, 4> power_limit_params = {"gpu_ids", "power_limit_mw", "block",
                                                                           "persist"};
    static constexpr std::array<std::string_view, 4> persistence_params = {"gpu_ids", "enabled", "block", "persist"};
    static constexpr std::array<std::string_view, 5> clock_params = {"gpu_ids", "min_clock_mhz", "max_clock_mhz",
                                                                     "block", "persist"};
    static constexpr std::array<std::string_view, 2> reset_params = {"gpu_ids", "block"};
    if (name == "set_power_limit") {
        base.kind = GpuCommand::SetPowerLimit;
        return power_limit_params;
    }
    if (name == "set_persistence_mode") {
        base.kind = GpuCommand::SetPersistenceMode;
        return persistence_params;
    }
    if (name == "set_gpu_locked_clocks" || name == "set_mem_locked_clocks") {
        base.kind = name == "set_gpu_locked_clocks" ? GpuCommand::SetGpuLockedClocks : GpuCommand::SetMemLockedClocks;
        return clock_params;
    }
    base.kind = name == "reset_gpu_locked_clocks"   ? GpuCommand::ResetGpuLockedClocks
                : name == "reset_mem_locked_clocks" ? GpuCommand::ResetMemLockedClocks
                                                    : GpuCommand::ResetLockedClocks;
    return reset_params;
}

}  // namespace

std::optional<Router::GpuControlRequest> Router::parse_gpu_control(Context& context) const {
    const std::string_view name = std::string_view(context.target.path).substr(5);  // after "/gpu/"
    GpuControlRequest request;
    auto checked = Query::check(context.target, control_command_of(name, request.base));
    if (auto* error = std::get_if<QueryError>(&checked)) {
        context.respond(Response::text(http::status::bad_request, error->message));
        return std::nullopt;
    }
    auto& query = std::get<Query>(checked);
    ControlCommand& base = request.base;
    const auto ids_text = query.required_string("gpu_ids");
    if (base.kind == GpuCommand::SetPowerLimit) base.power_limit_mw = query.required_u32("power_limit_mw").value_or(0);
    if (base.kind == GpuCommand::SetPersistenceMode) base.enabled = query.required_bool("enabled").value_or(false);
    if (base.kind == GpuCommand::SetGpuLockedClocks || base.kind == GpuCommand::SetMemLockedClocks) {
        base.min_clock_mhz = query.required_u32("min_clock_mhz").value_or(0);
        base.max_clock_mhz = query.required_u32("max_clock_mhz").value_or(0);
    }
    request.block = query.required_bool("block").value_or(false);
    if (const auto raw = query.raw("persist")) {
        if (*raw == "true") {
            request.persist = true;
        } else if (*raw != "false") {
            context.respond(Response::text(http::status::bad_request,
                                           "Query deserialize error: provided string was not `true` or `false`"));
            return std::nullopt;
        }
    }
    if (query.error()) {
        context.respond(Response::text(http::status::bad_request, query.error()->message));
        return std::nullopt;
    }
    auto parsed = parse_id_list(*ids_text, "gpu_ids", "GPU");
    if (auto* error = std::get_if<IdListError>(&parsed)) {
        context.respond(error_response(http::status::bad_request, error->message));
        return std::nullopt;
    }
    request.ids = std::get<std::vector<unsigned>>(std::move(parsed));
    for (const auto id : request.ids) {
        if (id >= gpus_->size()) {
            context.respond(Response::text(http::status::bad_request, fmt::format("GPU index {} does not exist.", id)));
            return std::nullopt;
        }
    }
    return request;
}

bool Router::control_allowed(Context& context) const {
    const auto& users = options_.control_users;
    const auto& groups = options_.control_groups;
    if (users.empty() && groups.empty()) return true;
    const bool allowed_user = context.peer.uid && users.contains(*context.peer.uid);
    const bool allowed_group = context.peer.gid && groups.contains(*context.peer.gid);
    if (allowed_user || allowed_group) return true;
    log::warn("refused {} from {}: not in the control allow-list", context.target.path, context.peer.describe());
    context.respond(error_response(
        http::status::forbidden,
        fmt::format("GPU control is restricted to listed users and groups, and {} is not one of them. Ask "
                    "the operator to add your user (--control-users) or group (--control-groups).",
                    context.peer.uid ? fmt::format("uid {}", *context.peer.uid) : "a TCP client")));
    return false;
}

namespace {

// Who the owner policy takes the client for: the kernel's word on a Unix
// socket (a token there only grants scopes); over TCP, the local user the
// token names. nullopt: nobody, who owns no process.
std::optional<std::uint32_t> client_uid(const Peer& peer, const std::optional<Claims>& claims) {
    if (peer.uid) return *peer.uid;
    if (!claims) return std::nullopt;
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(4096);
    if (getpwnam_r(claims->sub.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
        return std::nullopt;
    }
    return found->pw_uid;
}

}  // namespace

bool Router::owner_allows(Context& context, const GpuControlRequest& request) const {
    if (options_.ownership == nullptr) return true;
    const auto uid = client_uid(context.peer, context.claims);
    std::vector<std::string> messages;
    json refused = json::array();
    for (const auto id : request.ids) {
        const OwnershipCheck check = options_.ownership->check(gpus_->gpu(id), id, uid);
        if (check.allowed()) continue;
        // A token whose user has no account here: the message names that user.
        const std::string_view token_user = !uid && context.claims ? std::string_view(context.claims->sub) : "";
        messages.push_back(refusal_message(id, check, uid, token_user));
        json processes = json::array();
        for (const auto& other : check.others) {
            processes.push_back({{"pid", other.pid}, {"uid", other.uid}, {"user", other.user}});
        }
        json entry = {{"gpu", id}, {"reason", to_string(check.outcome)}, {"processes", processes}};
        if (!check.reason.empty()) entry["detail"] = check.reason;
        refused.push_back(std::move(entry));
    }
    if (messages.empty()) return true;
    const auto counts = options_.ownership->counts();
    log::warn(
        "refused {} from {}: {} (owner policy refusals since start: {} for other users' processes, {} "
        "unverifiable)",
        context.target.path, context.peer.describe(), fmt::join(messages, "; "),
        counts[static_cast<std::size_t>(OwnershipCheck::Outcome::OtherUsers)],
        counts[static_cast<std::size_t>(OwnershipCheck::Outcome::Unverifiable)]);
    const bool only_unverifiable = std::all_of(refused.begin(), refused.end(),
                                               [](const json& entry) { return entry["reason"] == "unverifiable"; });
    const std::string fix = only_unverifiable
                                ? "retry the request; if it keeps failing, see zeusd's log"
                                : "wait until the other users' processes end, use a GPU that is idle or runs only "
                                  "your processes, or ask the operator to change it";
    context.respond(Response::json(
        json_text(json{{"error", fmt::format("{}", fmt::join(messages, "; "))}, {"fix", fix}, {"refused", refused}}),
        http::status::forbidden));
    return false;
}

void Router::gpu_control(Context& context) const {
    const auto request = parse_gpu_control(context);
    if (!request || !control_allowed(context) || !owner_allows(context, *request)) return;
    // The audit line: who (the token's user when authentication is on) did what, from where.
    log::info("{} {} from {}{}", context.request.method_string(), context.request.target(), context.peer.describe(),
              context.claims ? fmt::format(" as token user '{}'", context.claims->sub) : std::string());
    const ClientId client = identify_client_ ? identify_client_(context.peer) : context.peer.pid.value_or(0);
    submit_gpu_control(context, *request, client);
}

void Router::submit_gpu_control(Context& context, const GpuControlRequest& request, ClientId client) const {
    const auto note = restore_note(request.base.kind, request.persist, context.peer, client);
    const auto ok = [note] {
        Response response = Response::empty_ok();
        if (note) response.headers.emplace_back(std::string(kRestoreHeader), *note);
        return response;
    };
    if (!request.block) {
        for (const auto id : request.ids) {
            ControlCommand command = request.base;
            command.gpu = id;
            gpus_->submit(command, client, request.persist, [command](Status status) {
                if (!status)
                    log::error("{} on GPU {} failed: {}", to_string(command.kind), command.gpu,
                               status.error().describe());
            });
        }
        context.respond(ok());
        return;
    }
    struct Pending {
        std::mutex mutex;
        std::size_t remaining;
        ErrorCollector errors;
        Respond respond;
    };
    auto pending = std::make_shared<Pending>();
    pending->remaining = request.ids.size();
    pending->respond = std::move(context.respond);
    for (const auto id : request.ids) {
        ControlCommand command = request.base;
        command.gpu = id;
        gpus_->submit(command, client, request.persist, [pending, command, ok](Status status) {
            const std::lock_guard lock(pending->mutex);
            if (!status) {
                log::error("{} on GPU {} failed: {}", to_string(command.kind), command.gpu, status.error().describe());
                pending->errors.add(command.gpu, status.error());
            }
            if (--pending->remaining == 0) {
                pending->respond(pending->errors.empty() ? ok() : pending->errors.response());
            }
        });
    }
}

namespace {

// The optional id list of read routes: all devices when absent.
std::variant<std::vector<unsigned>, Response> read_ids(Query& query, std::string_view parameter,
                                                       std::string_view noun, std::size_t count) {
    const auto raw = query.raw(parameter);
    if (!raw) return all_ids(count);
    auto parsed = parse_id_list(*raw, parameter, noun);
    if (auto* error = std::get_if<IdListError>(&parsed)) {
        return error_response(http::status::bad_request, error->message);
    }
    auto ids = std::get<std::vector<unsigned>>(std::move(parsed));
    for (const auto id : ids) {
        if (id >= count) return error_response(http::status::bad_request, fmt::format("{} {} not found", noun, id));
    }
    return ids;
}

}  // namespace

void Router::gpu_read(Context& context) const {
    auto checked = Query::check(context.target, {"gpu_ids"});
    if (auto* error = std::get_if<QueryError>(&checked)) {
        context.respond(Response::text(http::status::bad_request, error->message));
        return;
    }
    auto ids_or = read_ids(std::get<Query>(checked), "gpu_ids", "GPU", gpus_->size());
    if (auto* response = std::get_if<Response>(&ids_or)) {
        context.respond(std::move(*response));
        return;
    }
    const auto& ids = std::get<std::vector<unsigned>>(ids_or);
    const std::string_view name = std::string_view(context.target.path).substr(5);
    ErrorCollector errors;
    json body = json::object();
    json power = json::object();
    for (const auto id : ids) {
        const Gpu& gpu = gpus_->gpu(id);
        const auto key = std::to_string(id);
        if (name == "get_cumulative_energy") {
            auto energy = gpu.total_energy();
            if (energy) body[key] = {{"energy_mj", energy.value().count()}};
            else errors.add(id, energy.error());
        } else if (name == "get_power") {
            auto reading = gpu.power(PowerDomain::DeviceInstant);
            if (reading) power[key] = reading.value().power.count();
            else errors.add(id, reading.error());
        } else if (name == "get_power_limit") {
            auto limit = gpu.power_limit();
            if (limit) body[key] = {{"power_limit_mw", limit.value().count()}};
            else errors.add(id, limit.error());
        } else if (name == "get_power_limit_constraints") {
            auto constraints = gpu.power_limit_constraints();
            if (constraints) {
                body[key] = {{"min_power_limit_mw", constraints.value().min.count()},
                             {"max_power_limit_mw", constraints.value().max.count()}};
            } else {
                errors.add(id, constraints.error());
            }
        } else {
            auto mode = gpu.persistence_mode();
            if (mode) body[key] = {{"enabled", mode.value()}};
            else errors.add(id, mode.error());
        }
    }
    if (!errors.empty()) {
        context.respond(errors.response());
        return;
    }
    if (name == "get_power") body = json{{"timestamp_ms", now_ms()}, {"power_mw", power}};
    context.respond(Response::json(json_text(body)));
}

namespace {

std::variant<std::vector<unsigned>, Response> stream_ids(const RequestTarget& target, std::string_view parameter,
                                                         std::string_view noun, std::size_t count) {
    const std::array<std::string_view, 1> allowed = {parameter};
    auto checked = Query::check(target, allowed);
    if (auto* error = std::get_if<QueryError>(&checked)) return Response::text(http::status::bad_request, error->message);
    const auto raw = std::get<Query>(checked).raw(parameter);
    if (!raw) return all_ids(count);
    auto parsed = parse_id_list(*raw, parameter, noun);
    if (auto* error = std::get_if<IdListError>(&parsed)) return error_response(http::status::bad_request, error->message);
    auto ids = std::get<std::vector<unsigned>>(std::move(parsed));
    std::vector<unsigned> unknown;
    for (const auto id : ids) {
        if (id >= count) unknown.push_back(id);
    }
    if (!unknown.empty()) {
        return error_response(http::status::bad_request,
                               fmt::format("Unknown {} indices: {}. Available: {}", noun, debug_list(unknown),
                                           debug_list(all_ids(count))));
    }
    return ids;
}


}  // namespace

void Router::gpu_stream(Context& context) const {
    auto ids = stream_ids(context.target, "gpu_ids", "GPU", gpus_->size());
    if (auto* response = std::get_if<Response>(&ids)) {
        context.respond(std::move(*response));
        return;
    }
    context.respond(Response::event_stream(std::make_shared<PowerStreamSource>(
        streams_, StreamKind::GpuPower, std::get<std::vector<unsigned>>(std::move(ids)))));
}

void Router::cpu_stream(Context& context) const {
    auto ids = stream_ids(context.target, "cpu_ids", "CPU", cpu_count());
    if (auto* response = std::get_if<Response>(&ids)) {
        context.respond(std::move(*response));
        return;
    }
    context.respond(Response::event_stream(std::make_shared<PowerStreamSource>(
        streams_, StreamKind::CpuPower, std::get<std::vector<unsigned>>(std::move(ids)))));
}

void Router::cpu_energy(Context& context) const {
    auto checked = Query::check(context.target, {"cpu_ids", "cpu", "dram"});
    if (auto* error = std::get_if<QueryError>(&checked)) {
        context.respond(Response::text(http::status::bad_request, error->message));
        return;
    }
    auto& query = std::get<Query>(checked);
    const auto cpu = query.required_bool("cpu");
    const auto dram = query.required_bool("dram");
    if (query.error()) {
        context.respond(Response::text(http::status::bad_request, query.error()->message));
        return;
    }
    auto ids_or = read_ids(query, "cpu_ids", "CPU", cpu_count());
    if (auto* response = std::get_if<Response>(&ids_or)) {
        context.respond(std::move(*response));
        return;
    }
    ErrorCollector errors;
    json body = json::object();
    for (const auto id : std::get<std::vector<unsigned>>(ids_or)) {
        auto reading = cpus_->energy(id, *cpu, *dram);
        if (!reading) {
            errors.add(id, Error{ErrorCode::Unknown, reading.error().describe(), ""});
            continue;
        }
        const auto& value = reading.value();
        body[std::to_string(id)] = {{"cpu_energy_uj", value.cpu_uj ? json(*value.cpu_uj) : json(nullptr)},
                                    {"dram_energy_uj", value.dram_uj ? json(*value.dram_uj) : json(nullptr)}};
    }
    context.respond(errors.empty() ? Response::json(json_text(body)) : errors.response());
}

void Router::cpu_power(Context& context) const {
    auto checked = Query::check(context.target, {"cpu_ids"});
    if (auto* error = std::get_if<QueryError>(&checked)) {
        context.respond(Response::text(http::status::bad_request, error->message));
        return;
    }
    auto ids_or = read_ids(std::get<Query>(checked), "cpu_ids", "CPU", cpu_count());
    if (auto* response = std::get_if<Response>(&ids_or)) {
        context.respond(std::move(*response));
        return;
    }
    auto ids = std::get<std::vector<unsigned>>(std::move(ids_or));
    auto read_all = [cpus = cpus_, ids]() -> std::variant<std::vector<CpuEnergyReading>, Response> {
        std::vector<CpuEnergyReading> readings;
        ErrorCollector errors;
        for (const auto id : ids) {
            auto reading = cpus->energy(id, true, true);
            if (!reading) errors.add(id, Error{ErrorCode::Unknown, reading.error().describe(), ""});
            else readings.push_back(reading.value());
        }
        if (!errors.empty()) return errors.response();
        return readings;
    };
    auto first = read_all();
    if (auto* response = std::get_if<Response>(&first)) {
        context.respond(std::move(*response));
        return;
    }
    const auto started = std::chrono::steady_clock::now();
    // Sleeping on a timer keeps the request thread free for other clients.
    auto timer = std::make_shared<boost::asio::steady_timer>(executor_, options_.cpu_power_window);
    timer->async_wait([timer, started, ids, read_all, before = std::get<std::vector<CpuEnergyReading>>(std::move(first)),
                       respond = std::move(context.respond)](const boost::system::error_code&) {
        auto second = read_all();
        if (auto* response = std::get_if<Response>(&second)) {
            respond(std::move(*response));
            return;
        }
        const auto elapsed =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
        const auto& after = std::get<std::vector<CpuEnergyReading>>(second);
        json power = json::object();
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto reading = power_between(before[i], after[i], elapsed);
            power[std::to_string(ids[i])] = {{"cpu_mw", reading.cpu_mw},
                                             {"dram_mw", reading.dram_mw ? json(*reading.dram_mw) : json(nullptr)}};
        }
        respond(Response::json(json_text(json{{"timestamp_ms", now_ms()}, {"power_mw", power}})));
    });
}

void Router::metrics(Context& context) const {
    if (options_.metrics == nullptr) {
        context.respond(error_response(http::status::not_found, "No route for /metrics"));
        return;
    }
    context.respond(options_.metrics->respond(context.request));
}

}  // namespace zeus::zeusd
