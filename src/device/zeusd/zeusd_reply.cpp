#include "device/zeusd/zeusd_reply.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <optional>

#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd_backend {
namespace {

constexpr std::size_t kMaxQuoted = 600;  // keeps a runaway body out of error messages

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    std::string out(text.substr(first, last - first + 1));
    if (out.size() > kMaxQuoted) out = out.substr(0, kMaxQuoted) + "...";
    return out;
}

std::string_view device_kind(std::string_view target) { return target.starts_with("/cpu/") ? "CPU" : "GPU"; }

// The API group a route belongs to (§5.2), for the fix of a 403/404.
std::string_view route_group(std::string_view target) {
    if (target.starts_with("/gpu/set_") || target.starts_with("/gpu/reset_")) return "gpu-control";
    if (target.starts_with("/gpu/")) return "gpu-read";
    if (target.starts_with("/cpu/")) return "cpu-read";
    return {};
}

// The fix a refusal names itself ({"error": ..., "fix": ...}, as zeusd's
// owner policy answers), if any.
std::optional<std::string> daemon_fix(const HttpReply& reply) {
    const auto json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return std::nullopt;
    const auto it = json.find("fix");
    if (it == json.end() || !it->is_string()) return std::nullopt;
    return trimmed(it->get<std::string>());
}

std::string status_hint(const ZeusdConfig& config, const HttpReply& reply, std::string_view target,
                        std::string_view words) {
    if (auto fix = daemon_fix(reply)) return *std::move(fix);
    const std::string_view group = route_group(target);
    switch (reply.status) {
        case 401:
            return config.token ? "the daemon refused ZEUSD_TOKEN (expired, or signed with another key): ask its "
                                  "administrator for a new one (`zeusd token issue`) and set ZEUSD_TOKEN"
                                : "this zeusd requires a token: set ZEUSD_TOKEN to one its administrator issued "
                                  "(`zeusd token issue --user <you> --scope <groups>`)";
        case 403:
            if (words.find("lacks required scope") != std::string_view::npos) {
                return fmt::format("ask the daemon's administrator for a token with the {} scope "
                                   "(`zeusd token issue --scope {},...`) and set ZEUSD_TOKEN to it",
                                   group, group);
            }
            return "the daemon itself was not permitted to do this on the device; see its log "
                   "(`journalctl -u zeusd`) and run it as root or with CAP_SYS_ADMIN";
        case 404:
            if (words.find("is not enabled") != std::string_view::npos && !group.empty()) {
                return fmt::format("start zeusd with the {} group enabled (`zeusd serve --enable {},...`)", group,
                                   group);
            }
            return "the daemon does not know this route: it is probably older than this client; update zeusd";
        case 400:
            return "the daemon rejected the request's values; if they look right, the daemon and this client "
                   "may be different versions";
        default:
            if (reply.status >= 500) {
                return "the daemon failed while doing this on the device; see its log (`journalctl -u zeusd`)";
            }
            return "zeusd answers 200 on success; check that " + config.as_environment() + " points at zeusd";
    }
}

ErrorCode status_code(long status) {
    switch (status) {
        case 400: return ErrorCode::InvalidArgument;
        case 401:
        case 403: return ErrorCode::NoPermission;
        case 404: return ErrorCode::NotSupported;
        default: return ErrorCode::Unknown;
    }
}

}  // namespace

std::string daemon_words(const HttpReply& reply, std::string_view target) {
    const std::string text = trimmed(reply.body);
    if (text.empty()) return "(empty body)";
    const auto json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) {
        if (auto it = json.find("error"); it != json.end() && it->is_string()) return trimmed(it->get<std::string>());
        if (auto it = json.find("errors"); it != json.end() && it->is_object() && !it->empty()) {
            std::string out;
            for (const auto& [id, message] : it->items()) {
                out += fmt::format("{}{} {}: {}", out.empty() ? "" : "; ", device_kind(target), id,
                                   message.is_string() ? message.get<std::string>() : json_text(message));
            }
            return trimmed(out);
        }
    }
    return text;  // plain text, as actix answers a malformed query
}

Error http_error(const ZeusdConfig& config, std::string_view op, std::string_view method, const std::string& target,
                 const HttpReply& reply) {
    const std::string words = daemon_words(reply, target);
    return Error{status_code(reply.status),
                 fmt::format("Failed to {}: zeusd at {} answered {} to {} {}: {}", op, config.endpoint(), reply.status,
                             method, target, words),
                 status_hint(config, reply, target, words), static_cast<int>(reply.status)};
}

Error malformed_reply(const ZeusdConfig& config, std::string_view op, const std::string& target,
                      std::string_view problem) {
    return Error{ErrorCode::InvalidState,
                 fmt::format("Failed to {}: zeusd at {} answered {} with {}", op, config.endpoint(), target, problem),
                 fmt::format("the daemon and this client disagree on the API: check that {} points at zeusd and "
                             "that zeusd is up to date",
                             config.as_environment()),
                 200};
}

Result<nlohmann::json> parse_body(const ZeusdConfig& config, std::string_view op, const std::string& target,
                                  const HttpReply& reply) {
    auto json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
        return malformed_reply(config, op, target, fmt::format("a body that is not JSON: {}", trimmed(reply.body)));
    }
    return json;
}

Result<std::uint64_t> unsigned_field(const nlohmann::json& object, std::string_view key, std::uint64_t max) {
    const auto it = object.find(key);
    if (it == object.end()) return Error{ErrorCode::InvalidState, fmt::format("no \"{}\"", key), "", 0};
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
        return Error{ErrorCode::InvalidState, fmt::format("\"{}\": {} (not a non-negative integer)", key, it->dump()), "",
                     0};
    }
    const auto value = it->get<std::uint64_t>();
    if (value > max) {
        return Error{ErrorCode::InvalidState, fmt::format("\"{}\": {} (larger than {})", key, value, max), "", 0};
    }
    return value;
}

Result<unsigned> id_key(std::string_view key) {
    unsigned id = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || ec != std::errc{} || end != key.data() + key.size()) {
        return Error{ErrorCode::InvalidState, fmt::format("a key \"{}\" that is not a device index", key), "", 0};
    }
    return id;
}

}  // namespace zeus::zeusd_backend
