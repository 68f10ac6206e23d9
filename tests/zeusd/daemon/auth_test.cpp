// JWT authentication end to end: tokens issued by `zeusd token issue`,
// checked by a running daemon in the original's order (404, 401, 403).
#include <fstream>

#include "zeusd/auth/jwt.hpp"
#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

class ZeusdAuthTest : public ZeusdTest {
  protected:
    static void owner_only(const std::filesystem::path& path) {
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    void SetUp() override {
        ZeusdTest::SetUp();
        key_ = dir_ / "signing.key";
        std::ofstream(key_) << "a-test-signing-key-of-some-length";
        owner_only(key_);
    }

    std::string issue(const std::string& user, const std::string& scopes, const std::string& expires = "1h") const {
        auto [status, output] = run_zeusd({"token", "issue", "--signing-key-path", key_.string(), "--user", user,
                                           "--scope", scopes, "--expires", expires});
        EXPECT_EQ(status, 0) << output;
        while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
        return output;
    }
    static std::map<std::string, std::string> bearer(const std::string& token) {
        return {{"Authorization", "Bearer " + token}};
    }

    std::filesystem::path key_;
};

TEST_F(ZeusdAuthTest, DiscoverAndTimeNeedNoToken) {
    start({"--signing-key-path", key_.string()});
    const auto reply = get("/discover");
    ASSERT_EQ(reply.status, 200);
    EXPECT_EQ(json_of(reply)["auth_required"], true);
    EXPECT_EQ(get("/time").status, 200);
}

TEST_F(ZeusdAuthTest, MissingTokenIs401WithTheChallenge) {
    start({"--signing-key-path", key_.string()});
    for (const auto& headers : {std::map<std::string, std::string>{},
                                std::map<std::string, std::string>{{"Authorization", "Basic dXNlcjpwYXNz"}}}) {
        const auto reply = get("/gpu/get_power", headers);
        EXPECT_EQ(reply.status, 401);
        EXPECT_EQ(reply.body,
                  R"({"error":"Authentication required. Provide an Authorization: Bearer <token> header."})");
        EXPECT_EQ(reply.headers.at("www-authenticate"), "Bearer realm=\"zeusd\"");
    }
}

TEST_F(ZeusdAuthTest, ForgedExpiredAndScopelessTokensAreRefused) {
    start({"--signing-key-path", key_.string()});
    auto token = issue("alice", "gpu-read");
    auto forged = token;
    forged.back() = forged.back() == 'A' ? 'B' : 'A';
    auto reply = get("/gpu/get_power", bearer(forged));
    EXPECT_EQ(reply.status, 401);
    EXPECT_EQ(json_of(reply)["error"].get<std::string>().rfind("Invalid token: ", 0), 0U) << reply.body;

    // A token from another key is forged too.
    const auto other_key = dir_ / "other.key";
    std::ofstream(other_key) << "another-key";
    owner_only(other_key);
    auto [status, other] = run_zeusd({"token", "issue", "--signing-key-path", other_key.string(), "--user", "mallory",
                                      "--scope", "gpu-read,gpu-control", "--expires", "never"});
    ASSERT_EQ(status, 0);
    other.pop_back();
    EXPECT_EQ(get("/gpu/get_power", bearer(other)).status, 401);

    reply = get("/cpu/get_power", bearer(token));
    EXPECT_EQ(reply.status, 403);
    EXPECT_EQ(reply.body,
              R"({"error":"Token for user 'alice' lacks required scope 'cpu-read'. Token scopes: ['gpu-read']"})");
    reply = post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=200000&block=true", bearer(token));
    EXPECT_EQ(reply.status, 403);
    EXPECT_NE(reply.body.find("lacks required scope 'gpu-control'"), std::string::npos);
    EXPECT_EQ(get("/gpu/get_power", bearer(token)).status, 200);
}

TEST_F(ZeusdAuthTest, ExpiredTokensSaySo) {
    start({"--signing-key-path", key_.string()});
    // The original tolerates 60 s of clock skew (jsonwebtoken's leeway), so
    // an expired token is one whose exp is further back than that.
    std::ifstream in(key_);
    const std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    zeusd::Claims claims;
    claims.sub = "bob";
    claims.scopes = {zeusd::ApiGroup::GpuRead};
    claims.exp = zeusd::unix_now() - zeusd::kExpiryLeewaySeconds - 5;
    const auto reply = get("/gpu/get_power", bearer(zeusd::sign(claims, key).value()));
    EXPECT_EQ(reply.status, 401);
    EXPECT_EQ(reply.body, R"({"error":"Token has expired."})");
    claims.exp = zeusd::unix_now() - zeusd::kExpiryLeewaySeconds + 30;  // within the leeway
    EXPECT_EQ(get("/gpu/get_power", bearer(zeusd::sign(claims, key).value())).status, 200);
}

TEST_F(ZeusdAuthTest, WhoamiEchoesTheClaims) {
    start({"--signing-key-path", key_.string()});
    const auto before = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const auto token = issue("carol", "cpu-read,gpu-read", "2h");
    const auto reply = get("/auth/whoami", bearer(token));
    ASSERT_EQ(reply.status, 200) << reply.body;
    const auto body = json_of(reply);
    EXPECT_EQ(body["sub"], "carol");
    EXPECT_EQ(body["scopes"], json::parse(R"(["cpu-read","gpu-read"])"));
    EXPECT_GE(body["exp"].get<std::int64_t>(), before + 7200);
    EXPECT_LE(body["exp"].get<std::int64_t>(), before + 7202);

    const auto forever = json_of(get("/auth/whoami", bearer(issue("dave", "gpu-read", "never"))));
    EXPECT_FALSE(forever.contains("exp")) << forever;
    EXPECT_EQ(get("/auth/whoami").status, 401);
}

TEST_F(ZeusdAuthTest, WithoutAKeyAuthRoutesDoNotExist) {
    start();
    const auto reply = get("/auth/whoami");
    EXPECT_EQ(reply.status, 404);
    EXPECT_EQ(reply.body, R"({"error":"Authentication is not enabled on this server."})");
}

TEST_F(ZeusdAuthTest, DisabledGroupsAre404BeforeAuth) {
    start({"--signing-key-path", key_.string(), "--enable", "gpu-read"});
    const auto reply = get("/cpu/get_power");  // no token, and cpu-read is off
    EXPECT_EQ(reply.status, 404);
    EXPECT_EQ(reply.body, R"({"error":"API group 'cpu-read' is not enabled on this server."})");
}

TEST_F(ZeusdAuthTest, TokenIssueRejectsBadInput) {
    const auto empty_key = dir_ / "empty.key";
    std::ofstream(empty_key).flush();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"token", "issue", "--signing-key-path", empty_key.string(), "--user", "u", "--scope", "gpu-read"},
             {"token", "issue", "--signing-key-path", (dir_ / "missing.key").string(), "--user", "u", "--scope",
              "gpu-read"},
             {"token", "issue", "--signing-key-path", key_.string(), "--user", "u", "--scope", "gpu-write"},
             {"token", "issue", "--signing-key-path", key_.string(), "--user", "u", "--scope", "gpu-read", "--expires",
              "soon"},
         }) {
        const auto [status, output] = run_zeusd(args);
        EXPECT_NE(status, 0) << output;
        EXPECT_NE(output.find("zeusd: "), std::string::npos) << output;
    }
}

}  // namespace
}  // namespace zeus::testing

namespace zeus::testing {
namespace {

TEST_F(ZeusdAuthTest, ControlRequestsAreAuditedWithTheTokensUser) {
    start({"--signing-key-path", key_.string()});
    const auto token = issue("alice", "gpu-control");
    const auto reply = post("/gpu/reset_locked_clocks?gpu_ids=0&block=true", bearer(token));
    ASSERT_EQ(reply.status, 200) << reply.body;
    const auto line_start = log().rfind('\n', log().find("POST /gpu/reset_locked_clocks"));
    const auto line = log().substr(line_start + 1, log().find('\n', line_start + 1) - line_start - 1);
    EXPECT_NE(line.find("pid " + std::to_string(::getpid())), std::string::npos) << line;
    EXPECT_NE(line.find("as token user 'alice'"), std::string::npos) << line;
}

TEST_F(ZeusdAuthTest, AKeyOtherUsersCanReadIsRefusedAtStart) {
    std::filesystem::permissions(key_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                           std::filesystem::perms::group_read | std::filesystem::perms::others_read);
    const auto [status, output] =
        run_zeusd({"serve", "--socket-path", *endpoint_.unix_path, "--signing-key-path", key_.string()}, daemon_env());
    EXPECT_EQ(status, 1) << output;
    EXPECT_NE(output.find("mode 644"), std::string::npos) << output;
    EXPECT_NE(output.find("chmod 600"), std::string::npos) << output;
}

}  // namespace
}  // namespace zeus::testing
