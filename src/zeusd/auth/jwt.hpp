// HS256 JSON Web Tokens (RFC 7519) as the original daemon issues and checks
// them with Rust's `jsonwebtoken`: header {"typ":"JWT","alg":"HS256"}, claims
// {"sub": user, "scopes": [groups], "exp": unix seconds (optional)}. Tokens are
// byte-identical to the original's for the same claims and key, and work with
// any standard JWT library (PyJWT is cross-checked in the tests).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeusd/api_group.hpp"

namespace zeus::zeusd {

using UnixSeconds = std::uint64_t;

struct Claims {
    std::string sub;                 // the user, for audit logs and messages
    std::vector<ApiGroup> scopes;    // in token order, which the 403 message keeps
    std::optional<UnixSeconds> exp;  // nullopt: the token never expires

    bool operator==(const Claims&) const = default;
};

// jsonwebtoken's default Validation leeway, which the original keeps: a token
// is expired only once exp < now - 60 s, tolerating clock skew between the
// machine that issued it and the one checking it.
inline constexpr UnixSeconds kExpiryLeewaySeconds = 60;

// Why verify() refused a token. Carried in the Error's code (see
// token_problem) so that verify() can return a plain Result<Claims>.
enum class TokenProblem {
    Malformed,       // not three base64url parts of JSON, or a claim of the wrong type
    WrongAlgorithm,  // alg is not HS256 ("none" included)
    BadSignature,    // not signed with this key, or altered since
    UnknownScope,    // a scope that names no API group
    Expired,         // exp + leeway is in the past
};

// The claims as compact JSON in serde's field order,
// {"sub":"alice","scopes":["gpu-read"],"exp":1762864200} (exp left out when
// none): the token payload and /auth/whoami's body. Fails only for a sub that
// is not UTF-8.
[[nodiscard]] Result<std::string> claims_json(const Claims& claims);

// "header.payload.signature". Fails only for a user name that is not UTF-8
// (JSON cannot carry it) or an OpenSSL failure.
[[nodiscard]] Result<std::string> sign(const Claims& claims, std::string_view key);

// The token's claims if it is a well-formed HS256 JWT signed with `key` and not
// expired at `now`. Checks run in jsonwebtoken's order: structure, header and
// alg, signature, claims, expiry. On failure the Error's message is the reason
// as the original words it after "Invalid token: " in its 401 body
// ("InvalidSignature", "InvalidAlgorithm", "Base64 error: ...", "JSON error:
// ..."); the hint says what to do about it.
[[nodiscard]] Result<Claims> verify(std::string_view token, std::string_view key, UnixSeconds now);

// The problem behind an error from verify(); nullopt for any other error.
[[nodiscard]] std::optional<TokenProblem> token_problem(const Error& error);

// Seconds since the Unix epoch from the system clock.
[[nodiscard]] UnixSeconds unix_now();

}  // namespace zeus::zeusd
