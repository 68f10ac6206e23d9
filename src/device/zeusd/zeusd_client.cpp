// Connecting to zeusd: GET /discover, GET /auth/whoami, and what this client
// may do (the original's ZeusdClient.__init__ and require_capabilities).
#include "zeus/device/zeusd_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "device/zeusd/zeusd_client_internal.hpp"
#include "device/zeusd/zeusd_reply.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus {
namespace {

using nlohmann::json;

constexpr std::array kGroups = {ZeusdApiGroup::GpuControl, ZeusdApiGroup::GpuRead, ZeusdApiGroup::CpuRead};

// An answer from something that is not (this version of) zeusd.
Error older_daemon(const ZeusdConfig& config, std::string_view problem) {
    return Error{ErrorCode::Unavailable,
                 fmt::format("zeusd at {} is unusable: GET /discover {}; the daemon is older than this client, or "
                             "not zeusd",
                             config.endpoint(), problem),
                 fmt::format("update zeusd, or check that {} points at it; unset {} to use the devices directly",
                             config.as_environment(),
                             config.transport == ZeusdConfig::Transport::UnixSocket ? "ZEUSD_SOCK_PATH"
                                                                                     : "ZEUSD_HOST_PORT"),
                 0};
}

Result<ZeusdGpuInfo> parse_gpu(const json& j) {
    if (!j.is_object()) return Error{ErrorCode::InvalidState, "a GPU entry that is not an object", "", 0};
    ZeusdGpuInfo gpu;
    auto id = zeusd_backend::unsigned_field(j, "id", std::numeric_limits<unsigned>::max());
    if (!id) return id.error();
    gpu.id = static_cast<unsigned>(*id);
    for (const char* key : {"name", "pci_address"}) {
        if (!j.contains(key) || !j.at(key).is_string()) {
            return Error{ErrorCode::InvalidState, fmt::format("GPU {} has no string \"{}\"", gpu.id, key), "", 0};
        }
    }
    if (!j.contains("cumulative_energy_available") || !j.at("cumulative_energy_available").is_boolean()) {
        return Error{ErrorCode::InvalidState, fmt::format("GPU {} has no boolean \"cumulative_energy_available\"", gpu.id),
                     "", 0};
    }
    gpu.name = j.at("name").get<std::string>();
    gpu.pci_address = j.at("pci_address").get<std::string>();
    gpu.cumulative_energy_available = j.at("cumulative_energy_available").get<bool>();
    return gpu;
}

Result<ZeusdCpuInfo> parse_cpu(const json& j) {
    if (!j.is_object()) return Error{ErrorCode::InvalidState, "a CPU entry that is not an object", "", 0};
    ZeusdCpuInfo cpu;
    auto id = zeusd_backend::unsigned_field(j, "id", std::numeric_limits<unsigned>::max());
    if (!id) return id.error();
    cpu.id = static_cast<unsigned>(*id);
    if (!j.contains("dram_available") || !j.at("dram_available").is_boolean()) {
        return Error{ErrorCode::InvalidState, fmt::format("CPU {} has no boolean \"dram_available\"", cpu.id), "", 0};
    }
    cpu.dram_available = j.at("dram_available").get<bool>();
    return cpu;
}

Result<ZeusdDiscovery> parse_discovery(const json& j) {
    auto fail = [](std::string what) { return Error{ErrorCode::InvalidState, std::move(what), "", 0}; };
    if (!j.is_object()) return fail("answered something that is not a JSON object");
    ZeusdDiscovery d;
    for (const char* key : {"gpus", "cpus", "enabled_api_groups"}) {
        if (!j.contains(key) || !j.at(key).is_array()) return fail(fmt::format("answered without the \"{}\" list", key));
    }
    if (!j.contains("auth_required") || !j.at("auth_required").is_boolean()) {
        return fail("answered without \"auth_required\"");
    }
    for (const auto& g : j.at("gpus")) {
        auto gpu = parse_gpu(g);
        if (!gpu) return fail("answered " + gpu.error().message);
        d.gpus.push_back(std::move(gpu).value());
    }
    for (const auto& c : j.at("cpus")) {
        auto cpu = parse_cpu(c);
        if (!cpu) return fail("answered " + cpu.error().message);
        d.cpus.push_back(cpu.value());
    }
    for (const auto& g : j.at("enabled_api_groups")) {
        if (!g.is_string()) return fail("answered an API group that is not a string: " + json_text(g));
        d.enabled_api_groups.push_back(g.get<std::string>());
    }
    d.auth_required = j.at("auth_required").get<bool>();
    if (auto v = j.find("version"); v != j.end() && v->is_string()) d.version = v->get<std::string>();
    return d;
}

Result<ZeusdIdentity> parse_identity(const json& j) {
    auto fail = [](std::string what) { return Error{ErrorCode::InvalidState, std::move(what), "", 0}; };
    if (!j.is_object() || !j.contains("sub") || !j.at("sub").is_string()) return fail("no string \"sub\"");
    if (!j.contains("scopes") || !j.at("scopes").is_array()) return fail("no \"scopes\" list");
    ZeusdIdentity who;
    who.sub = j.at("sub").get<std::string>();
    for (const auto& s : j.at("scopes")) {
        if (!s.is_string()) return fail("a scope that is not a string: " + json_text(s));
        who.scopes.push_back(s.get<std::string>());
    }
    if (auto exp = j.find("exp"); exp != j.end() && !exp->is_null()) {
        auto seconds = zeusd_backend::unsigned_field(j, "exp", std::numeric_limits<std::int64_t>::max() / 1000);
        if (!seconds) return seconds.error();
        who.expires = std::chrono::system_clock::time_point(std::chrono::seconds(*seconds));
    }
    return who;
}

std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
    return out;
}

std::string list_ids(const std::vector<unsigned>& ids) {
    std::vector<std::string> parts;
    for (unsigned id : ids) parts.push_back(std::to_string(id));
    return parts.empty() ? "none" : join(parts);
}

}  // namespace

ZeusdClient::ZeusdClient(ZeusdConfig config)
    : config_(std::move(config)), transport_(std::make_unique<Transport>(config_)) {}

ZeusdClient::~ZeusdClient() = default;

Result<std::shared_ptr<ZeusdClient>> ZeusdClient::connect(ZeusdConfig config) {
    std::shared_ptr<ZeusdClient> client(new ZeusdClient(std::move(config)));
    if (auto s = client->connect_and_discover(); !s) return s.error();
    if (client->discovery_.auth_required) client->who_am_i();
    return client;
}

Status ZeusdClient::connect_and_discover() {
    const std::string target = "/discover";
    auto reply = transport_->connection.request("GET", target, config_.read_timeout);
    if (!reply) return reply.error();
    if (reply->status != 200) {
        return older_daemon(config_, fmt::format("answered {}: {}", reply->status, zeusd_backend::daemon_words(*reply, target)));
    }
    const auto j = json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return older_daemon(config_, "answered a body that is not JSON");
    auto discovery = parse_discovery(j);
    if (!discovery) return older_daemon(config_, discovery.error().message);
    discovery_ = std::move(discovery).value();
    return {};
}

void ZeusdClient::who_am_i() {
    if (!config_.token) {
        auth_error_ = Error{ErrorCode::NoPermission,
                            fmt::format("zeusd at {} requires authentication and no token is configured",
                                        config_.endpoint()),
                            "set ZEUSD_TOKEN to a token the daemon's administrator issued "
                            "(`zeusd token issue --user <you> --scope gpu-read,cpu-read`)",
                            401};
        return;
    }
    auto reply = get("check the token", "/auth/whoami", "");
    if (!reply) {
        auth_error_ = reply.error();
        return;
    }
    auto j = zeusd_backend::parse_body(config_, "check the token", reply->target, reply->http);
    if (!j) {
        auth_error_ = j.error();
        return;
    }
    auto who = parse_identity(*j);
    if (!who) {
        auth_error_ = zeusd_backend::malformed_reply(config_, "check the token", reply->target, who.error().message);
        return;
    }
    identity_ = std::move(who).value();
}

bool ZeusdClient::group_enabled(ZeusdApiGroup group) const {
    const auto& groups = discovery_.enabled_api_groups;
    return std::find(groups.begin(), groups.end(), to_string(group)) != groups.end();
}

bool ZeusdClient::scope_granted(ZeusdApiGroup group) const {
    if (!discovery_.auth_required) return true;
    if (!identity_) return false;
    const auto& scopes = identity_->scopes;
    return std::find(scopes.begin(), scopes.end(), to_string(group)) != scopes.end();
}

bool ZeusdClient::can(ZeusdApiGroup group) const {
    return !auth_error_ && group_enabled(group) && scope_granted(group);
}

Status ZeusdClient::require(const ZeusdRequirements& needs) const {
    if (auth_error_) return *auth_error_;
    std::vector<std::string> problems;
    std::vector<std::string> fixes;
    std::vector<std::string> disabled;
    std::vector<std::string> unscoped;
    for (ZeusdApiGroup group : kGroups) {
        const bool needed = (group == ZeusdApiGroup::GpuControl && needs.control_gpu) ||
                            (group == ZeusdApiGroup::GpuRead && needs.read_gpu) ||
                            (group == ZeusdApiGroup::CpuRead && needs.read_cpu);
        if (!needed) continue;
        if (!group_enabled(group)) {
            disabled.emplace_back(to_string(group));
        } else if (!scope_granted(group)) {
            unscoped.emplace_back(to_string(group));
        }
    }
    if (!disabled.empty()) {
        problems.push_back(fmt::format("API group{} not enabled: {} (enabled: {})", disabled.size() == 1 ? "" : "s",
                                       join(disabled),
                                       discovery_.enabled_api_groups.empty() ? "none"
                                                                             : join(discovery_.enabled_api_groups)));
        fixes.push_back(fmt::format("start zeusd with `--enable {}` among its groups", join(disabled, ",")));
    }
    if (!unscoped.empty()) {
        problems.push_back(fmt::format("the token for user '{}' lacks scope{} {} (token scopes: {})",
                                       identity_ ? identity_->sub : "?", unscoped.size() == 1 ? "" : "s",
                                       join(unscoped), identity_ && !identity_->scopes.empty() ? join(identity_->scopes)
                                                                                               : "none"));
        fixes.push_back(fmt::format("ask the daemon's administrator for a token with {} (`zeusd token issue --scope "
                                    "{}`) and set ZEUSD_TOKEN to it",
                                    join(unscoped), join(unscoped, ",")));
    }
    auto missing_ids = [&](const std::vector<unsigned>& wanted, const auto& have, std::string_view kind) {
        std::vector<unsigned> missing;
        std::vector<unsigned> present;
        for (const auto& device : have) present.push_back(device.id);
        for (unsigned id : wanted) {
            if (std::find(present.begin(), present.end(), id) == present.end()) missing.push_back(id);
        }
        if (missing.empty()) return;
        problems.push_back(fmt::format("{} {} not on the daemon (it has {}s: {})", kind, list_ids(missing), kind,
                                       list_ids(present)));
        fixes.push_back(fmt::format("use {} indices the daemon lists in /discover (`zeus show-env`)", kind));
    };
    missing_ids(needs.gpu_ids, discovery_.gpus, "GPU");
    missing_ids(needs.cpu_ids, discovery_.cpus, "CPU");
    if (problems.empty()) return {};
    const bool permission = !disabled.empty() || !unscoped.empty();
    return Error{permission ? ErrorCode::NoPermission : ErrorCode::NotFound,
                 fmt::format("zeusd at {} cannot do this for this client: {}", config_.endpoint(), join(problems, "; ")),
                 join(fixes, "; "), 0};
}

}  // namespace zeus
