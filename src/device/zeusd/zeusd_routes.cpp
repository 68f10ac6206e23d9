// One method per route of zeusd's HTTP API (zeus-inventory §5.3), with the
// original client's query parameters: `true`/`false`, decimal numbers,
// comma-joined ids. Any status other than 200 is an error carrying the
// daemon's words; a 200 whose body lacks a requested device is one too.
#include <fmt/format.h>

#include <functional>
#include <limits>

#include "device/zeusd/zeusd_client_internal.hpp"
#include "device/zeusd/zeusd_reply.hpp"
#include "zeus/device/zeusd_client.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus {
namespace {

using nlohmann::json;

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr auto kI64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

std::string bool_param(bool value) { return value ? "true" : "false"; }

std::string joined_ids(const std::vector<unsigned>& ids) {
    std::string out;
    for (unsigned id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

// "?gpu_ids=0,1" for reads of some devices, "" for all of them.
std::string optional_ids(std::string_view name, const std::vector<unsigned>& ids) {
    return ids.empty() ? std::string{} : fmt::format("{}={}", name, joined_ids(ids));
}

// Reads `{"<id>": value, ...}` into a map, requiring every asked-for id.
template <class T>
Result<std::map<unsigned, T>> id_map(const json& object, const std::vector<unsigned>& wanted,
                                     const std::function<Result<T>(const json&)>& value_of) {
    if (!object.is_object()) return Error{ErrorCode::InvalidState, "a body that is not a JSON object", "", 0};
    std::map<unsigned, T> out;
    for (const auto& [key, value] : object.items()) {
        auto id = zeusd_backend::id_key(key);
        if (!id) return id.error();
        auto parsed = value_of(value);
        if (!parsed) {
            return Error{ErrorCode::InvalidState, fmt::format("device {}: {}", key, parsed.error().message), "", 0};
        }
        out.emplace(*id, std::move(parsed).value());
    }
    for (unsigned id : wanted) {
        if (!out.contains(id)) {
            return Error{ErrorCode::InvalidState, fmt::format("no entry for requested device {}", id), "", 0};
        }
    }
    return out;
}

template <class Q>
Result<Q> unsigned_as(const json& object, std::string_view key, std::uint64_t max) {
    if (!object.is_object())
        return Error{ErrorCode::InvalidState, "an entry that is not an object: " + json_text(object), "", 0};
    auto value = zeusd_backend::unsigned_field(object, key, max);
    if (!value) return value.error();
    return Q(static_cast<typename Q::rep>(*value));
}

// `{"timestamp_ms": N, "power_mw": {...}}`: the timestamp.
Result<std::chrono::system_clock::time_point> timestamp_of(const json& body) {
    if (!body.is_object()) return Error{ErrorCode::InvalidState, "a body that is not a JSON object", "", 0};
    auto ms = zeusd_backend::unsigned_field(body, "timestamp_ms", kI64Max);
    if (!ms) return ms.error();
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::milliseconds(*ms)));
}

Result<std::optional<Microjoules>> optional_microjoules(const json& entry, std::string_view key) {
    if (!entry.contains(key)) return Error{ErrorCode::InvalidState, fmt::format("no \"{}\"", key), "", 0};
    if (entry.at(key).is_null()) return std::optional<Microjoules>();
    auto value = zeusd_backend::unsigned_field(entry, key, kI64Max);
    if (!value) return value.error();
    return std::optional<Microjoules>(Microjoules(static_cast<std::int64_t>(*value)));
}

Status check_u32(std::string_view what, std::int64_t value, std::string_view unit) {
    if (value >= 0 && static_cast<std::uint64_t>(value) <= kU32Max) return {};
    return Error{ErrorCode::InvalidArgument, fmt::format("{} {} {} cannot be sent to zeusd", what, value, unit),
                 fmt::format("zeusd takes {} as an unsigned 32-bit number of {}", what, unit), 0};
}

}  // namespace

Result<ZeusdClient::Reply> ZeusdClient::get(std::string_view op, const std::string& path, const std::string& query) {
    Reply reply{query.empty() ? path : path + "?" + query, {}};
    auto http = transport_->connection.request("GET", reply.target, config_.read_timeout);
    if (!http) {
        Error e = http.error();
        e.message = fmt::format("Failed to {}: {}", op, e.message);
        return e;
    }
    if (http->status != 200) return zeusd_backend::http_error(config_, op, "GET", reply.target, *http);
    reply.http = std::move(http).value();
    return reply;
}

Status ZeusdClient::post(std::string_view op, const std::string& path, const std::vector<unsigned>& gpu_ids,
                         const std::string& query) {
    if (gpu_ids.empty()) {
        return Error{ErrorCode::InvalidArgument, fmt::format("Failed to {}: no GPU index given", op),
                     "list the daemon's GPU indices to change", 0};
    }
    const std::string target = fmt::format("{}?gpu_ids={}&{}", path, joined_ids(gpu_ids), query);
    auto http = transport_->connection.request("POST", target, config_.control_timeout);
    if (!http) {
        Error e = http.error();
        e.message = fmt::format("Failed to {}: {}", op, e.message);
        return e;
    }
    if (http->status != 200) return zeusd_backend::http_error(config_, op, "POST", target, *http);
    return {};
}

Status ZeusdClient::set_power_limit(const std::vector<unsigned>& gpu_ids, Milliwatts limit, bool block) {
    if (auto s = check_u32("power limit", limit.count(), "mW"); !s) return s;
    return post("set the GPU power limit", "/gpu/set_power_limit", gpu_ids,
                fmt::format("power_limit_mw={}&block={}", limit.count(), bool_param(block)));
}

Status ZeusdClient::set_persistence_mode(const std::vector<unsigned>& gpu_ids, bool enabled, bool block) {
    return post("set the GPU persistence mode", "/gpu/set_persistence_mode", gpu_ids,
                fmt::format("enabled={}&block={}", bool_param(enabled), bool_param(block)));
}

Status ZeusdClient::set_gpu_locked_clocks(const std::vector<unsigned>& gpu_ids, Megahertz min, Megahertz max,
                                          bool block) {
    if (auto s = check_u32("minimum clock", min.count(), "MHz"); !s) return s;
    if (auto s = check_u32("maximum clock", max.count(), "MHz"); !s) return s;
    return post("lock the GPU clocks", "/gpu/set_gpu_locked_clocks", gpu_ids,
                fmt::format("min_clock_mhz={}&max_clock_mhz={}&block={}", min.count(), max.count(), bool_param(block)));
}

Status ZeusdClient::reset_gpu_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block) {
    return post("reset the GPU locked clocks", "/gpu/reset_gpu_locked_clocks", gpu_ids, "block=" + bool_param(block));
}

Status ZeusdClient::set_memory_locked_clocks(const std::vector<unsigned>& gpu_ids, Megahertz min, Megahertz max,
                                             bool block) {
    if (auto s = check_u32("minimum clock", min.count(), "MHz"); !s) return s;
    if (auto s = check_u32("maximum clock", max.count(), "MHz"); !s) return s;
    return post("lock the GPU memory clocks", "/gpu/set_mem_locked_clocks", gpu_ids,
                fmt::format("min_clock_mhz={}&max_clock_mhz={}&block={}", min.count(), max.count(), bool_param(block)));
}

Status ZeusdClient::reset_memory_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block) {
    return post("reset the GPU memory locked clocks", "/gpu/reset_mem_locked_clocks", gpu_ids,
                "block=" + bool_param(block));
}

Status ZeusdClient::reset_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block) {
    return post("reset the GPU locked clocks", "/gpu/reset_locked_clocks", gpu_ids, "block=" + bool_param(block));
}

// The reads share one shape: GET, parse, map by id; the op names the route in errors.
#define ZEUS_PARSE_OR_FAIL(op, reply, body_var)                                          \
    auto body_var = zeusd_backend::parse_body(config_, op, (reply)->target, (reply)->http);    \
    if (!body_var) return body_var.error()

Result<std::map<unsigned, Millijoules>> ZeusdClient::gpu_energy(const std::vector<unsigned>& gpu_ids) {
    constexpr std::string_view op = "read GPU energy";
    auto reply = get(op, "/gpu/get_cumulative_energy", optional_ids("gpu_ids", gpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto map = id_map<Millijoules>(*body, gpu_ids, [](const json& e) { return unsigned_as<Millijoules>(e, "energy_mj", kI64Max); });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, map.error().message);
    return map;
}

Result<ZeusdGpuPower> ZeusdClient::gpu_power(const std::vector<unsigned>& gpu_ids) {
    constexpr std::string_view op = "read GPU power";
    auto reply = get(op, "/gpu/get_power", optional_ids("gpu_ids", gpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto when = timestamp_of(*body);
    if (!when) return zeusd_backend::malformed_reply(config_, op, reply->target, when.error().message);
    auto map = id_map<Milliwatts>(body->value("power_mw", json()), gpu_ids, [](const json& e) -> Result<Milliwatts> {
        auto mw = zeusd_backend::unsigned_field(json{{"power_mw", e}}, "power_mw", kU32Max);
        if (!mw) return mw.error();
        return Milliwatts(static_cast<std::int64_t>(*mw));
    });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, "\"power_mw\": " + map.error().message);
    return ZeusdGpuPower{*when, std::move(map).value()};
}

Result<std::map<unsigned, Milliwatts>> ZeusdClient::power_limit(const std::vector<unsigned>& gpu_ids) {
    constexpr std::string_view op = "read the GPU power limit";
    auto reply = get(op, "/gpu/get_power_limit", optional_ids("gpu_ids", gpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto map = id_map<Milliwatts>(*body, gpu_ids, [](const json& e) { return unsigned_as<Milliwatts>(e, "power_limit_mw", kU32Max); });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, map.error().message);
    return map;
}

Result<std::map<unsigned, std::pair<Milliwatts, Milliwatts>>> ZeusdClient::power_limit_constraints(
    const std::vector<unsigned>& gpu_ids) {
    constexpr std::string_view op = "read the GPU power limit constraints";
    auto reply = get(op, "/gpu/get_power_limit_constraints", optional_ids("gpu_ids", gpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    using Range = std::pair<Milliwatts, Milliwatts>;
    auto map = id_map<Range>(*body, gpu_ids, [](const json& e) -> Result<Range> {
        auto min = unsigned_as<Milliwatts>(e, "min_power_limit_mw", kU32Max);
        if (!min) return min.error();
        auto max = unsigned_as<Milliwatts>(e, "max_power_limit_mw", kU32Max);
        if (!max) return max.error();
        return Range{*min, *max};
    });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, map.error().message);
    return map;
}

Result<std::map<unsigned, bool>> ZeusdClient::persistence_mode(const std::vector<unsigned>& gpu_ids) {
    constexpr std::string_view op = "read the GPU persistence mode";
    auto reply = get(op, "/gpu/get_persistence_mode", optional_ids("gpu_ids", gpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto map = id_map<bool>(*body, gpu_ids, [](const json& e) -> Result<bool> {
        if (!e.is_object() || !e.contains("enabled") || !e.at("enabled").is_boolean()) {
            return Error{ErrorCode::InvalidState, "no boolean \"enabled\": " + json_text(e), "", 0};
        }
        return e.at("enabled").get<bool>();
    });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, map.error().message);
    return map;
}

Result<std::map<unsigned, ZeusdCpuEnergy>> ZeusdClient::cpu_energy(const std::vector<unsigned>& cpu_ids, bool cpu,
                                                                   bool dram) {
    constexpr std::string_view op = "read CPU energy";
    std::string query = fmt::format("cpu={}&dram={}", bool_param(cpu), bool_param(dram));
    if (!cpu_ids.empty()) query += "&cpu_ids=" + joined_ids(cpu_ids);
    auto reply = get(op, "/cpu/get_cumulative_energy", query);
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto map = id_map<ZeusdCpuEnergy>(*body, cpu_ids, [cpu, dram](const json& e) -> Result<ZeusdCpuEnergy> {
        if (!e.is_object())
            return Error{ErrorCode::InvalidState, "an entry that is not an object: " + json_text(e), "", 0};
        ZeusdCpuEnergy energy;
        auto package = optional_microjoules(e, "cpu_energy_uj");
        if (!package) return package.error();
        auto memory = optional_microjoules(e, "dram_energy_uj");
        if (!memory) return memory.error();
        // Requested package energy is never optional: null would be a silent hole.
        if (cpu && !*package)
            return Error{ErrorCode::InvalidState, "\"cpu_energy_uj\" is null though requested", "", 0};
        if (cpu) energy.cpu = *package;
        if (dram) energy.dram = *memory;
        return energy;
    });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, map.error().message);
    return map;
}

Result<ZeusdCpuPower> ZeusdClient::cpu_power(const std::vector<unsigned>& cpu_ids) {
    constexpr std::string_view op = "read CPU power";
    auto reply = get(op, "/cpu/get_power", optional_ids("cpu_ids", cpu_ids));
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto when = timestamp_of(*body);
    if (!when) return zeusd_backend::malformed_reply(config_, op, reply->target, when.error().message);
    auto map = id_map<ZeusdCpuPowerReading>(
        body->value("power_mw", json()), cpu_ids, [](const json& e) -> Result<ZeusdCpuPowerReading> {
            auto cpu = unsigned_as<Milliwatts>(e, "cpu_mw", kU32Max);
            if (!cpu) return cpu.error();
            ZeusdCpuPowerReading reading{*cpu, std::nullopt};
            if (e.contains("dram_mw") && !e.at("dram_mw").is_null()) {
                auto dram = unsigned_as<Milliwatts>(e, "dram_mw", kU32Max);
                if (!dram) return dram.error();
                reading.dram = *dram;
            }
            return reading;
        });
    if (!map) return zeusd_backend::malformed_reply(config_, op, reply->target, "\"power_mw\": " + map.error().message);
    return ZeusdCpuPower{*when, std::move(map).value()};
}

Result<std::chrono::system_clock::time_point> ZeusdClient::time() {
    constexpr std::string_view op = "read the daemon's time";
    auto reply = get(op, "/time", "");
    if (!reply) return reply.error();
    ZEUS_PARSE_OR_FAIL(op, reply, body);
    auto when = timestamp_of(*body);
    if (!when) return zeusd_backend::malformed_reply(config_, op, reply->target, when.error().message);
    return when;
}

#undef ZEUS_PARSE_OR_FAIL

}  // namespace zeus
