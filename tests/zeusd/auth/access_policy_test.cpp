#include "zeusd/auth/access_policy.hpp"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

const std::string kKey = "policy-test-key";
constexpr UnixSeconds kNow = 1'762'000'000;
const ApiGroups kAllGroups = {ApiGroup::GpuControl, ApiGroup::GpuRead, ApiGroup::CpuRead};

std::string bearer(const Claims& claims, const std::string& key = kKey) { return "Bearer " + sign(claims, key).value(); }

const Claims kReader{"alice", {ApiGroup::GpuRead, ApiGroup::CpuRead}, kNow + 3600};

AccessDecision with_auth(std::string_view path, std::optional<std::string_view> header,
                         const ApiGroups& enabled = kAllGroups) {
    return check_access(path, enabled, kKey, header, kNow);
}

AccessDecision without_auth(std::string_view path, const ApiGroups& enabled = kAllGroups) {
    return check_access(path, enabled, std::nullopt, std::nullopt, kNow);
}

Rejected rejected(const AccessDecision& decision) {
    EXPECT_TRUE(std::holds_alternative<Rejected>(decision));
    return std::holds_alternative<Rejected>(decision) ? std::get<Rejected>(decision) : Rejected{};
}

std::optional<Claims> allowed(const AccessDecision& decision) {
    EXPECT_TRUE(std::holds_alternative<Allowed>(decision))
        << (std::holds_alternative<Rejected>(decision) ? std::get<Rejected>(decision).body : "");
    return std::holds_alternative<Allowed>(decision) ? std::get<Allowed>(decision).claims : std::nullopt;
}

const Rejected kAuthRequired{
    401, R"({"error":"Authentication required. Provide an Authorization: Bearer <token> header."})", true};

// 1. Disabled groups --------------------------------------------------------

TEST(AccessPolicy, DisabledGroupIs404WithOrWithoutAuth) {
    const ApiGroups cpu_only = {ApiGroup::CpuRead};
    const Rejected gpu_read{404, R"({"error":"API group 'gpu-read' is not enabled on this server."})", false};
    const Rejected gpu_control{404, R"({"error":"API group 'gpu-control' is not enabled on this server."})", false};
    EXPECT_EQ(rejected(without_auth("/gpu/get_power", cpu_only)), gpu_read);
    EXPECT_EQ(rejected(without_auth("/gpu/set_power_limit", cpu_only)), gpu_control);
    EXPECT_EQ(rejected(without_auth("/gpu/reset_locked_clocks", cpu_only)), gpu_control);
    // Before any token check: no header, a bad token, a token with the scope.
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", std::nullopt, cpu_only)), gpu_read);
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", "Bearer junk", cpu_only)), gpu_read);
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(kReader), cpu_only)), gpu_read);
    EXPECT_EQ(rejected(without_auth("/cpu/get_power", {ApiGroup::GpuRead})),
              (Rejected{404, R"({"error":"API group 'cpu-read' is not enabled on this server."})", false}));
}

// 2. No signing key ---------------------------------------------------------

TEST(AccessPolicy, WithoutAKeyAuthEndpointsAre404) {
    const Rejected not_enabled{404, R"({"error":"Authentication is not enabled on this server."})", false};
    EXPECT_EQ(rejected(without_auth("/auth/whoami")), not_enabled);
    EXPECT_EQ(rejected(check_access("/auth/whoami", kAllGroups, std::nullopt, bearer(kReader), kNow)), not_enabled);
}

TEST(AccessPolicy, WithoutAKeyEverythingEnabledPassesWithoutClaims) {
    for (const char* path : {"/discover", "/time", "/gpu/get_power", "/gpu/set_power_limit", "/cpu/get_power",
                             "/unknown", "/auth", "/authx"}) {
        EXPECT_EQ(allowed(without_auth(path)), std::nullopt) << path;
    }
    // A header, even a broken one, is ignored when auth is off.
    EXPECT_EQ(allowed(check_access("/gpu/get_power", kAllGroups, std::nullopt, "Bearer junk", kNow)), std::nullopt);
}

// 3. Open endpoints -----------------------------------------------------------

TEST(AccessPolicy, DiscoverAndTimeNeedNoToken) {
    EXPECT_EQ(allowed(with_auth("/discover", std::nullopt)), std::nullopt);
    EXPECT_EQ(allowed(with_auth("/time", "Bearer junk")), std::nullopt);
    // Exact paths only.
    EXPECT_EQ(rejected(with_auth("/discover/", std::nullopt)), kAuthRequired);
    EXPECT_EQ(rejected(with_auth("/timex", std::nullopt)), kAuthRequired);
}

// 4. Authentication -----------------------------------------------------------

TEST(AccessPolicy, MissingOrNonBearerHeaderIs401WithChallenge) {
    for (const std::optional<std::string_view> header :
         {std::optional<std::string_view>(), std::optional<std::string_view>(""),
          std::optional<std::string_view>("Basic YWxpY2U6cHc="), std::optional<std::string_view>("bearer abc"),
          std::optional<std::string_view>("Bearer"), std::optional<std::string_view>("BearerX abc")}) {
        EXPECT_EQ(rejected(with_auth("/gpu/get_power", header)), kAuthRequired) << header.value_or("<none>");
    }
    EXPECT_EQ(rejected(with_auth("/auth/whoami", std::nullopt)), kAuthRequired);
    EXPECT_EQ(rejected(with_auth("/unknown/path", std::nullopt)), kAuthRequired);
}

TEST(AccessPolicy, HeaderWithNonVisibleAsciiCountsAsMissing) {
    const auto good = bearer(kReader);
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", good + "\x7F")), kAuthRequired);
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", good + "\xC3\xA9")), kAuthRequired);
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", good + "\n")), kAuthRequired);
}

TEST(AccessPolicy, InvalidTokenIs401WithTheReason) {
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", "Bearer ")),
              (Rejected{401, R"({"error":"Invalid token: InvalidToken"})", true}));
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", "Bearer a.b")),
              (Rejected{401, R"({"error":"Invalid token: InvalidToken"})", true}));
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(kReader, "another key"))),
              (Rejected{401, R"({"error":"Invalid token: InvalidSignature"})", true}));
    // A second space belongs to the token, as in the original.
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", "Bearer  " + sign(kReader, kKey).value())),
              (Rejected{401, R"({"error":"Invalid token: Base64 error: Invalid symbol 32, offset 0."})", true}));
}

TEST(AccessPolicy, ExpiredTokenIs401) {
    const Claims old{"alice", {ApiGroup::GpuRead}, kNow - kExpiryLeewaySeconds - 1};
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(old))),
              (Rejected{401, R"({"error":"Token has expired."})", true}));
    const Claims just_in_leeway{"alice", {ApiGroup::GpuRead}, kNow - kExpiryLeewaySeconds};
    EXPECT_TRUE(allowed(with_auth("/gpu/get_power", bearer(just_in_leeway))));
}

// 5. Authorization ------------------------------------------------------------

TEST(AccessPolicy, MissingScopeIs403ListingTheTokensScopes) {
    EXPECT_EQ(rejected(with_auth("/gpu/set_power_limit", bearer(kReader))),
              (Rejected{403,
                        R"({"error":"Token for user 'alice' lacks required scope 'gpu-control'. Token scopes: ['gpu-read', 'cpu-read']"})",
                        false}));
    const Claims one{"bob", {ApiGroup::GpuControl}, std::nullopt};
    EXPECT_EQ(rejected(with_auth("/cpu/get_cumulative_energy", bearer(one))).body,
              R"({"error":"Token for user 'bob' lacks required scope 'cpu-read'. Token scopes: ['gpu-control']"})");
    const Claims none{"carol", {}, std::nullopt};
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(none))).body,
              R"({"error":"Token for user 'carol' lacks required scope 'gpu-read'. Token scopes: []"})");
}

TEST(AccessPolicy, UserNameIsJsonEscapedInTheBody) {
    const Claims odd{"o'neil \"x\"", {}, std::nullopt};
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(odd))).body,
              R"({"error":"Token for user 'o'neil \"x\"' lacks required scope 'gpu-read'. Token scopes: []"})");
}

TEST(AccessPolicy, GpuControlDoesNotImplyGpuRead) {
    const Claims controller{"ops", {ApiGroup::GpuControl}, std::nullopt};
    EXPECT_TRUE(allowed(with_auth("/gpu/set_power_limit", bearer(controller))));
    EXPECT_EQ(rejected(with_auth("/gpu/get_power", bearer(controller))).status, 403);
}

// 6. Allowed, with claims -------------------------------------------------------

TEST(AccessPolicy, ValidTokenWithTheScopeIsAllowedWithItsClaims) {
    EXPECT_EQ(allowed(with_auth("/gpu/get_power", bearer(kReader))), kReader);
    EXPECT_EQ(allowed(with_auth("/cpu/stream_power", bearer(kReader))), kReader);
}

TEST(AccessPolicy, PathsWithoutAGroupNeedOnlyAValidToken) {
    const Claims none{"carol", {}, std::nullopt};
    EXPECT_EQ(allowed(with_auth("/auth/whoami", bearer(none))), none);
    EXPECT_EQ(allowed(with_auth("/no/such/route", bearer(none))), none);
}

TEST(AccessPolicy, WwwAuthenticateValueIsTheOriginals) {
    EXPECT_EQ(kWwwAuthenticateHeader, "WWW-Authenticate");
    EXPECT_EQ(kWwwAuthenticateValue, "Bearer realm=\"zeusd\"");
}

TEST(WhoamiBody, MatchesTheOriginalShape) {
    EXPECT_EQ(whoami_body(Claims{"alice", {ApiGroup::GpuRead}, 1'762'864'200}),
              R"({"sub":"alice","scopes":["gpu-read"],"exp":1762864200})");
    EXPECT_EQ(whoami_body(Claims{"bob", {ApiGroup::GpuControl, ApiGroup::CpuRead}, std::nullopt}),
              R"({"sub":"bob","scopes":["gpu-control","cpu-read"]})");
}

}  // namespace
}  // namespace zeus::zeusd
