#include "zeusd/auth/access_policy.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

constexpr int kUnauthorized = 401;
constexpr int kForbidden = 403;
constexpr int kNotFound = 404;

std::string error_body(std::string_view message) {
    // dump() writes compact JSON, as serde_json does: {"error":"..."}.
    return json_text(nlohmann::json{{"error", message}});
}

Rejected unauthorized(std::string_view message) { return Rejected{kUnauthorized, error_body(message), true}; }

// The token part of "Bearer <token>", as the original takes it: the value
// must be visible ASCII (or tab), else it counts as absent, and the scheme
// must be exactly "Bearer " (case and the single space included).
std::optional<std::string_view> bearer_token(std::optional<std::string_view> header) {
    if (!header) return std::nullopt;
    for (const char c : *header) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && byte != '\t') || byte >= 0x7F) return std::nullopt;
    }
    constexpr std::string_view kScheme = "Bearer ";
    if (!header->starts_with(kScheme)) return std::nullopt;
    return header->substr(kScheme.size());
}

// Python-list style, as the original formats it: ['gpu-read', 'cpu-read'].
std::string scope_list(const std::vector<ApiGroup>& scopes) {
    std::string out = "[";
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (i > 0) out += ", ";
        out += fmt::format("'{}'", to_string(scopes[i]));
    }
    return out + "]";
}

}  // namespace

AccessDecision check_access(std::string_view path, const ApiGroups& enabled,
                            const std::optional<std::string>& signing_key,
                            std::optional<std::string_view> authorization, UnixSeconds now) {
    const auto group = required_group(path);
    if (group && !enabled.contains(*group)) {
        return Rejected{kNotFound, error_body(fmt::format("API group '{}' is not enabled on this server.", to_string(*group)))};
    }

    if (!signing_key) {
        if (path.starts_with("/auth/")) {
            return Rejected{kNotFound, error_body("Authentication is not enabled on this server.")};
        }
        return Allowed{};
    }

    if (path == "/discover" || path == "/time") return Allowed{};

    const auto token = bearer_token(authorization);
    if (!token) return unauthorized("Authentication required. Provide an Authorization: Bearer <token> header.");

    auto claims = verify(*token, *signing_key, now);
    if (!claims) {
        if (token_problem(claims.error()) == TokenProblem::Expired) return unauthorized("Token has expired.");
        return unauthorized("Invalid token: " + claims.error().message);
    }

    if (group) {
        const auto& scopes = claims.value().scopes;
        if (std::find(scopes.begin(), scopes.end(), *group) == scopes.end()) {
            return Rejected{kForbidden,
                            error_body(fmt::format("Token for user '{}' lacks required scope '{}'. Token scopes: {}",
                                                   claims.value().sub, to_string(*group), scope_list(scopes)))};
        }
    }
    return Allowed{std::move(claims).value()};
}

std::string whoami_body(const Claims& claims) {
    // The original serializes the same Claims struct it signs.
    return claims_json(claims).value();
}

}  // namespace zeus::zeusd
