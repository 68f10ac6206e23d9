#include "zeusd/auth/token_issue.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "zeusd/auth/duration.hpp"
#include "zeusd/auth/signing_key.hpp"

namespace zeus::zeusd {
namespace {

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// parse_api_groups() validates (and words the error); this keeps the order.
Result<std::vector<ApiGroup>> parse_scopes(std::string_view list) {
    if (auto valid = parse_api_groups(list); !valid) {
        return Error{ErrorCode::InvalidArgument, "--scope: " + valid.error().message, valid.error().hint};
    }
    std::vector<ApiGroup> scopes;
    while (true) {
        const auto comma = list.find(',');
        const auto group = parse_api_group(trim(list.substr(0, comma)));
        if (group && std::find(scopes.begin(), scopes.end(), *group) == scopes.end()) scopes.push_back(*group);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return scopes;
}

}  // namespace

Result<std::string> issue_token(const std::string& key_path, std::string_view user, std::string_view scopes,
                                std::string_view expires, UnixSeconds now) {
    if (key_path.empty()) {
        return Error{ErrorCode::InvalidArgument, "--signing-key-path is empty",
                     "pass the key file that `zeusd serve --signing-key-path` uses"};
    }
    if (trim(user).empty()) {
        return Error{ErrorCode::InvalidArgument, "--user is empty",
                     "pass the name of the token's holder, e.g. --user alice; it appears in logs and 403 messages"};
    }
    auto groups = parse_scopes(scopes);
    if (!groups) return groups.error();
    auto lifetime = parse_expires(expires);
    if (!lifetime) return lifetime.error();

    Claims claims{std::string(user), std::move(groups).value(), std::nullopt};
    if (const auto seconds = lifetime.value()) {
        UnixSeconds exp = 0;
        if (__builtin_add_overflow(now, *seconds, &exp)) {
            return Error{ErrorCode::InvalidArgument, fmt::format("--expires {} is too far in the future", expires),
                         "use a shorter lifetime, or --expires never for a token that does not expire"};
        }
        claims.exp = exp;
    }

    // The key last: a typo in the other flags is reported without touching it.
    auto key = load_signing_key(key_path);
    if (!key) return key.error();
    return sign(claims, key.value());
}

}  // namespace zeus::zeusd
