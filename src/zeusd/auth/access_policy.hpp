// The original daemon's per-request auth middleware (auth.rs) as a pure
// function: who may call what, and the exact response when they may not.
// The HTTP layer only extracts the inputs and writes out a Rejected.
//
// Order of checks, as the original:
//  1. The path needs an API group that is not enabled -> 404, auth or not.
//  2. No signing key: /auth/* -> 404; anything else is allowed.
//  3. /discover and /time are allowed without a token.
//  4. No "Authorization: Bearer <token>" -> 401; a token verify() refuses ->
//     401 ("Token has expired." or "Invalid token: <reason>").
//  5. The token lacks the path's group -> 403.
//  6. Allowed, with the token's claims for the handler (e.g. /auth/whoami).
// Every 401 carries WWW-Authenticate: Bearer realm="zeusd" (RFC 6750 §3).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "zeusd/api_group.hpp"
#include "zeusd/auth/jwt.hpp"

namespace zeus::zeusd {

inline constexpr std::string_view kWwwAuthenticateHeader = "WWW-Authenticate";
inline constexpr std::string_view kWwwAuthenticateValue = "Bearer realm=\"zeusd\"";

struct Allowed {
    std::optional<Claims> claims;  // nullopt when no token was checked
};

struct Rejected {
    int status = 0;                 // 401, 403 or 404
    std::string body;               // {"error":"..."}, sent as application/json
    bool www_authenticate = false;  // add kWwwAuthenticateHeader: kWwwAuthenticateValue

    bool operator==(const Rejected&) const = default;
};

using AccessDecision = std::variant<Allowed, Rejected>;

// path: the request path without the query string. signing_key: the key bytes
// when auth is on. authorization: the Authorization header's raw value, if
// the request has one. now: unix seconds, for expiry.
[[nodiscard]] AccessDecision check_access(std::string_view path, const ApiGroups& enabled,
                                          const std::optional<std::string>& signing_key,
                                          std::optional<std::string_view> authorization, UnixSeconds now);

// GET /auth/whoami's 200 body: {"sub":"alice","scopes":["gpu-read"],"exp":1762864200},
// exp left out for a token that never expires.
[[nodiscard]] std::string whoami_body(const Claims& claims);

}  // namespace zeus::zeusd
