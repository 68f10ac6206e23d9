#include "zeusd/auth/jwt.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <climits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http_server/json_limits.hpp"
#include "zeusd/auth/base64url.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

// jsonwebtoken's Header::new(HS256), field order included, so that our tokens
// are byte-identical to the original's.
constexpr std::string_view kHeaderJson = R"({"typ":"JWT","alg":"HS256"})";

constexpr std::string_view kReissueHint = "issue a new token with `zeusd token issue` and send it whole";

// One ErrorCode per problem, so that token_problem() can read it back.
constexpr ErrorCode code_of(TokenProblem problem) {
    switch (problem) {
        case TokenProblem::Malformed: return ErrorCode::InvalidArgument;
        case TokenProblem::WrongAlgorithm: return ErrorCode::NotSupported;
        case TokenProblem::BadSignature: return ErrorCode::NoPermission;
        case TokenProblem::UnknownScope: return ErrorCode::NotFound;
        case TokenProblem::Expired: return ErrorCode::Timeout;
    }
    return ErrorCode::Unknown;
}

Error rejection(TokenProblem problem, std::string reason, std::string_view hint = kReissueHint) {
    return Error{code_of(problem), std::move(reason), std::string(hint)};
}

std::optional<std::string> hmac_sha256(std::string_view key, std::string_view data) {
    if (key.size() > static_cast<std::size_t>(INT_MAX)) return std::nullopt;
    // OpenSSL wants a non-null pointer even for an empty key.
    static const unsigned char kEmpty = 0;
    const void* key_bytes = key.empty() ? static_cast<const void*>(&kEmpty) : key.data();
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    if (HMAC(EVP_sha256(), key_bytes, static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &mac_size) == nullptr) {
        return std::nullopt;
    }
    return std::string(reinterpret_cast<const char*>(mac), mac_size);
}

// A base64url JSON object, as a JWT header or payload.
Result<nlohmann::json> decode_part(std::string_view part, std::string_view what) {
    auto bytes = base64url_decode(part);
    if (!bytes) return rejection(TokenProblem::Malformed, "Base64 error: " + bytes.error().message);
    nlohmann::json json;
    try {
        // A key given twice ({"scopes":[],"scopes":["gpu-control"]}) has no one
        // meaning (parsers differ on which one wins): such a token is refused.
        json = http_server::parse_json_checked(bytes.value(), {.refuse_duplicate_keys = true});
    } catch (const http_server::JsonLimitError& e) {
        return rejection(TokenProblem::Malformed, fmt::format("JSON error in the {}: {}", what, e.what()));
    } catch (const nlohmann::json::exception&) {
        json = nullptr;
    }
    if (!json.is_object()) {
        return rejection(TokenProblem::Malformed, fmt::format("JSON error: the {} is not a JSON object", what));
    }
    return json;
}

Error missing_field(std::string_view name) {
    return rejection(TokenProblem::Malformed, fmt::format("JSON error: missing field `{}`", name));
}

Error wrong_type(std::string_view name, std::string_view expected) {
    return rejection(TokenProblem::Malformed, fmt::format("JSON error: invalid type for `{}`, expected {}", name, expected));
}

Result<std::vector<ApiGroup>> parse_scopes(const nlohmann::json& payload) {
    const auto it = payload.find("scopes");
    if (it == payload.end()) return missing_field("scopes");
    if (!it->is_array()) return wrong_type("scopes", "a sequence");
    std::vector<ApiGroup> scopes;
    for (const auto& item : *it) {
        if (!item.is_string()) return wrong_type("scopes", "a sequence of strings");
        const auto& name = item.get_ref<const std::string&>();
        const auto group = parse_api_group(name);
        if (!group) {
            return rejection(TokenProblem::UnknownScope,
                             fmt::format("JSON error: unknown variant `{}`, expected one of `gpu-control`, "
                                         "`gpu-read`, `cpu-read`", name),
                             "the token was issued for a scope this server does not know; issue a new one "
                             "with `zeusd token issue --scope` naming gpu-control, gpu-read, cpu-read or metrics");
        }
        scopes.push_back(*group);
    }
    return scopes;
}

Result<Claims> parse_claims(const nlohmann::json& payload) {
    Claims claims;
    const auto sub = payload.find("sub");
    if (sub == payload.end()) return missing_field("sub");
    if (!sub->is_string()) return wrong_type("sub", "a string");
    claims.sub = sub->get<std::string>();

    auto scopes = parse_scopes(payload);
    if (!scopes) return scopes.error();
    claims.scopes = std::move(scopes).value();

    // Absent or null: no expiry (serde's Option). Anything but a whole number
    // of seconds >= 0 is refused, as usize would.
    const auto exp = payload.find("exp");
    if (exp != payload.end() && !exp->is_null()) {
        if (!exp->is_number_unsigned()) return wrong_type("exp", "an unsigned integer (unix seconds)");
        claims.exp = exp->get<UnixSeconds>();
    }

    // RFC 7519 §4.1.3: a recipient not named in "aud" must reject the token;
    // zeusd names none, so any audience is refused, as jsonwebtoken does.
    if (payload.contains("aud")) {
        return rejection(TokenProblem::Malformed, "InvalidAudience",
                         "zeusd tokens carry no audience; issue one with `zeusd token issue`");
    }
    return claims;
}

}  // namespace

Result<std::string> claims_json(const Claims& claims) {
    // ordered_json keeps serde's field order: sub, scopes, exp.
    nlohmann::ordered_json payload;
    payload["sub"] = claims.sub;
    payload["scopes"] = nlohmann::ordered_json::array();
    for (const auto group : claims.scopes) payload["scopes"].push_back(std::string(to_string(group)));
    if (claims.exp) payload["exp"] = *claims.exp;
    // The name is who the token is for: refused, never replaced.
    if (!is_utf8(claims.sub)) {
        return Error{ErrorCode::InvalidArgument, "the user name is not valid UTF-8", "pass --user as UTF-8 text"};
    }
    return json_text(payload);
}

Result<std::string> sign(const Claims& claims, std::string_view key) {
    auto payload_json = claims_json(claims);
    if (!payload_json) return payload_json.error();
    std::string token = base64url_encode(kHeaderJson) + '.' + base64url_encode(payload_json.value());
    const auto mac = hmac_sha256(key, token);
    if (!mac) {
        return Error{ErrorCode::Unknown, "OpenSSL could not compute HMAC-SHA256",
                     "check the OpenSSL installation (libcrypto 3) and that the key is under 2 GiB"};
    }
    token += '.';
    token += base64url_encode(*mac);
    return token;
}

Result<Claims> verify(std::string_view token, std::string_view key, UnixSeconds now) {
    // Exactly three parts: header.payload.signature.
    const auto first_dot = token.find('.');
    const auto last_dot = token.rfind('.');
    if (first_dot == std::string_view::npos || first_dot == last_dot ||
        token.find('.', first_dot + 1) != last_dot) {
        return rejection(TokenProblem::Malformed, "InvalidToken");
    }
    const auto signed_part = token.substr(0, last_dot);
    const auto payload_text = token.substr(first_dot + 1, last_dot - first_dot - 1);
    const auto signature = token.substr(last_dot + 1);

    auto header = decode_part(token.substr(0, first_dot), "header");
    if (!header) return header.error();
    const auto alg = header.value().find("alg");
    if (alg == header.value().end()) return missing_field("alg");
    // Only HS256: "none" (unsigned) and every other algorithm are refused
    // before the signature is looked at, so no header can pick the check.
    if (!alg->is_string() || alg->get_ref<const std::string&>() != "HS256") {
        return rejection(TokenProblem::WrongAlgorithm, "InvalidAlgorithm",
                         "zeusd accepts only HS256 tokens; issue one with `zeusd token issue`");
    }

    // Compare encoded signatures, as jsonwebtoken does: with a canonical
    // encoding, equal text means equal bytes, and a non-canonical one is
    // refused. CRYPTO_memcmp takes the same time wherever the first
    // difference is, so timing tells an attacker nothing about the MAC.
    const auto mac = hmac_sha256(key, signed_part);
    if (!mac) {
        return Error{ErrorCode::Unknown, "OpenSSL could not compute HMAC-SHA256",
                     "check the OpenSSL installation (libcrypto 3)"};
    }
    const std::string expected = base64url_encode(*mac);
    if (signature.size() != expected.size() ||
        CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) != 0) {
        return rejection(TokenProblem::BadSignature, "InvalidSignature",
                         "the token was not signed with this server's signing key, or was altered; "
                         "issue a new one with `zeusd token issue --signing-key-path` naming the server's key");
    }

    auto payload = decode_part(payload_text, "payload");
    if (!payload) return payload.error();
    auto claims = parse_claims(payload.value());
    if (!claims) return claims.error();

    const auto& exp = claims.value().exp;
    if (exp && now > kExpiryLeewaySeconds && *exp < now - kExpiryLeewaySeconds) {
        return rejection(TokenProblem::Expired, "ExpiredSignature",
                         "issue a new token with `zeusd token issue --expires` (e.g. 7d, or never)");
    }
    return claims;
}

std::optional<TokenProblem> token_problem(const Error& error) {
    for (const auto problem : {TokenProblem::Malformed, TokenProblem::WrongAlgorithm, TokenProblem::BadSignature,
                               TokenProblem::UnknownScope, TokenProblem::Expired}) {
        if (code_of(problem) == error.code) return problem;
    }
    return std::nullopt;
}

UnixSeconds unix_now() {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return static_cast<UnixSeconds>(std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count());
}

}  // namespace zeus::zeusd
