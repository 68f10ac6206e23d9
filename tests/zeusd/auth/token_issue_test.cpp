#include "zeusd/auth/token_issue.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "zeusd/auth/base64url.hpp"

namespace zeus::zeusd {
namespace {

using testing::TempDir;

constexpr UnixSeconds kNow = 1'762'000'000;
constexpr std::string_view kKey = "issue-test-key";

std::string payload_of(const std::string& token) {
    const auto first = token.find('.');
    return base64url_decode(token.substr(first + 1, token.rfind('.') - first - 1)).value();
}

class TokenIssue : public ::testing::Test {
  protected:
    TempDir dir_;
    std::string key_path_ = dir_.file("signing.key", kKey);
};

TEST_F(TokenIssue, IssuesAVerifiableTokenExpiringAfterTheLifetime) {
    const auto token = issue_token(key_path_, "alice", "gpu-read,cpu-read", "7d", kNow).value();
    EXPECT_EQ(payload_of(token), R"({"sub":"alice","scopes":["gpu-read","cpu-read"],"exp":1762604800})");
    EXPECT_EQ(verify(token, kKey, kNow).value(),
              (Claims{"alice", {ApiGroup::GpuRead, ApiGroup::CpuRead}, kNow + 7 * 86400}));
    EXPECT_EQ(token, sign(Claims{"alice", {ApiGroup::GpuRead, ApiGroup::CpuRead}, kNow + 604'800}, kKey).value());
}

TEST_F(TokenIssue, NeverAndZeroLeaveExpOut) {
    for (const char* expires : {"never", "0"}) {
        const auto token = issue_token(key_path_, "bob", "gpu-control", expires, kNow).value();
        EXPECT_EQ(payload_of(token), R"({"sub":"bob","scopes":["gpu-control"]})") << expires;
    }
}

TEST_F(TokenIssue, HumantimeLifetimes) {
    EXPECT_EQ(verify(issue_token(key_path_, "a", "cpu-read", "1h 30m", kNow).value(), kKey, kNow).value().exp,
              kNow + 5400);
    EXPECT_EQ(verify(issue_token(key_path_, "a", "cpu-read", "2weeks", kNow).value(), kKey, kNow).value().exp,
              kNow + 1'209'600);
}

TEST_F(TokenIssue, KeepsScopeOrderTrimsSpacesAndDropsRepeats) {
    const auto token = issue_token(key_path_, "a", " cpu-read , gpu-control,cpu-read", "never", kNow).value();
    EXPECT_EQ(payload_of(token), R"({"sub":"a","scopes":["cpu-read","gpu-control"]})");
}

TEST_F(TokenIssue, RefusesAnEmptyUser) {
    for (const char* user : {"", "  "}) {
        const auto token = issue_token(key_path_, user, "gpu-read", "7d", kNow);
        ASSERT_FALSE(token);
        EXPECT_EQ(token.error().message, "--user is empty");
        EXPECT_NE(token.error().hint.find("--user alice"), std::string::npos);
    }
}

TEST_F(TokenIssue, RefusesUnknownOrEmptyScopes) {
    const auto unknown = issue_token(key_path_, "a", "gpu-read,gpu-write", "7d", kNow);
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message, "--scope: unknown API group 'gpu-write'");
    EXPECT_NE(unknown.error().hint.find("gpu-control, gpu-read, cpu-read and metrics"), std::string::npos);
    for (const char* list : {"", "gpu-read,", ",cpu-read"}) {
        const auto empty = issue_token(key_path_, "a", list, "7d", kNow);
        ASSERT_FALSE(empty) << list;
        EXPECT_EQ(empty.error().message, "--scope: empty API group name in the list") << list;
    }
}

TEST_F(TokenIssue, RefusesABadLifetime) {
    const auto token = issue_token(key_path_, "a", "gpu-read", "7 dayz", kNow);
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().message.rfind("invalid --expires value '7 dayz': unknown time unit \"dayz\"", 0), 0U);
}

TEST_F(TokenIssue, RefusesALifetimePastTheEndOfTime) {
    const auto token = issue_token(key_path_, "a", "gpu-read", "18446744073709551615s", kNow);
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().message, "--expires 18446744073709551615s is too far in the future");
    EXPECT_NE(token.error().hint.find("never"), std::string::npos);
}

TEST_F(TokenIssue, ReportsKeyProblemsWithThePath) {
    const auto empty_key = dir_.file("empty.key", "");
    const auto empty = issue_token(empty_key, "a", "gpu-read", "7d", kNow);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().message, "signing key file '" + empty_key + "' is empty");

    const auto missing_key = (dir_.path() / "missing.key").string();
    const auto missing = issue_token(missing_key, "a", "gpu-read", "7d", kNow);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_NE(missing.error().message.find(missing_key), std::string::npos);

    const auto no_path = issue_token("", "a", "gpu-read", "7d", kNow);
    ASSERT_FALSE(no_path);
    EXPECT_EQ(no_path.error().message, "--signing-key-path is empty");
}

TEST_F(TokenIssue, ChecksFlagsBeforeReadingTheKey) {
    // A typo in --scope is reported even when the key path is also wrong.
    const auto token = issue_token((dir_.path() / "missing.key").string(), "a", "gpu-reed", "7d", kNow);
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().message, "--scope: unknown API group 'gpu-reed'");
}

}  // namespace
}  // namespace zeus::zeusd
