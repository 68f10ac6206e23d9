#include "zeusd/auth/jwt.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "zeusd/auth/base64url.hpp"

namespace zeus::zeusd {
namespace {

using testing::cli_signed_token;
using testing::have_openssl_cli;
using testing::openssl_cli_signature;

constexpr std::string_view kKey = "test-secret-key-for-unit-tests!!";
constexpr UnixSeconds kNow = 1'762'000'000;
// jsonwebtoken's Header::new(HS256) serialized: {"typ":"JWT","alg":"HS256"}.
constexpr std::string_view kOriginalHeader = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9";

Claims alice() { return Claims{"alice", {ApiGroup::GpuRead, ApiGroup::CpuRead}, 1'762'864'200}; }

std::string part(std::string_view token, int index) {
    std::size_t start = 0;
    for (int i = 0; i < index; ++i) start = token.find('.', start) + 1;
    return std::string(token.substr(start, token.find('.', start) - start));
}

void expect_problem(const Result<Claims>& result, TokenProblem problem, std::string_view reason) {
    ASSERT_FALSE(result) << "accepted a token that should fail with " << reason;
    EXPECT_EQ(token_problem(result.error()), problem) << result.error().message;
    EXPECT_EQ(result.error().message, reason);
    EXPECT_FALSE(result.error().hint.empty());
}

// --- Signing --------------------------------------------------------------

TEST(JwtSign, HeaderAndPayloadAreTheOriginalsBytes) {
    const auto token = sign(alice(), kKey).value();
    EXPECT_EQ(part(token, 0), kOriginalHeader);
    EXPECT_EQ(base64url_decode(part(token, 1)).value(),
              R"({"sub":"alice","scopes":["gpu-read","cpu-read"],"exp":1762864200})");
}

TEST(JwtSign, LeavesExpOutWhenTheTokenNeverExpires) {
    const auto token = sign(Claims{"bob", {ApiGroup::GpuControl}, std::nullopt}, kKey).value();
    EXPECT_EQ(base64url_decode(part(token, 1)).value(), R"({"sub":"bob","scopes":["gpu-control"]})");
}

TEST(JwtSign, SignatureMatchesOpensslCommandLine) {
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const auto token = sign(alice(), kKey).value();
    const auto signing_input = token.substr(0, token.rfind('.'));
    EXPECT_EQ(part(token, 2), openssl_cli_signature(kKey, signing_input));
}

TEST(JwtSign, KeyIsRawBytesIncludingNulAndNewline) {
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const std::string key("\x00\xFFkey\n", 6);
    const auto token = sign(alice(), key).value();
    EXPECT_EQ(part(token, 2), openssl_cli_signature(key, token.substr(0, token.rfind('.'))));
    EXPECT_TRUE(verify(token, key, kNow));
    expect_problem(verify(token, "\xFFkey\n", kNow), TokenProblem::BadSignature, "InvalidSignature");
}

TEST(JwtSign, EscapesTheUserName) {
    const Claims claims{"a\"b\\c\nd", {}, std::nullopt};
    const auto token = sign(claims, kKey).value();
    EXPECT_EQ(base64url_decode(part(token, 1)).value(), R"({"sub":"a\"b\\c\nd","scopes":[]})");
    EXPECT_EQ(verify(token, kKey, kNow).value(), claims);
}

TEST(JwtSign, RefusesAUserNameThatIsNotUtf8) {
    const auto token = sign(Claims{"\xC3\x28", {}, std::nullopt}, kKey);
    ASSERT_FALSE(token);
    EXPECT_NE(token.error().message.find("UTF-8"), std::string::npos);
    EXPECT_NE(token.error().hint.find("--user"), std::string::npos);
}

TEST(JwtClaimsJson, IsTheWhoamiShape) {
    EXPECT_EQ(claims_json(Claims{"alice", {ApiGroup::GpuRead}, 1'762'864'200}).value(),
              R"({"sub":"alice","scopes":["gpu-read"],"exp":1762864200})");
    EXPECT_EQ(claims_json(Claims{"alice", {}, std::nullopt}).value(), R"({"sub":"alice","scopes":[]})");
}

// --- Verifying: known vectors ------------------------------------------------

TEST(JwtVerify, RoundTrips) {
    EXPECT_EQ(verify(sign(alice(), kKey).value(), kKey, kNow).value(), alice());
    const Claims forever{"bob", {ApiGroup::GpuControl, ApiGroup::GpuRead}, std::nullopt};
    EXPECT_EQ(verify(sign(forever, kKey).value(), kKey, kNow).value(), forever);
}

TEST(JwtVerify, Rfc7515AppendixA1PassesTheSignatureCheck) {
    // RFC 7515 A.1: an HS256 JWS whose header has a CRLF in it. It carries no
    // sub, so it must get past the signature (computed by someone else) and
    // stop at the claims.
    const std::string token =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const auto key =
        base64url_decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
            .value();
    expect_problem(verify(token, key, kNow), TokenProblem::Malformed, "JSON error: missing field `sub`");

    std::string altered = token;
    altered.back() = 'Y';
    expect_problem(verify(altered, key, kNow), TokenProblem::BadSignature, "InvalidSignature");
}

TEST(JwtVerify, JwtIoExamplePassesTheSignatureCheck) {
    // jwt.io's HS256 example, secret "your-256-bit-secret": a header in the
    // other field order, and extra claims, which are ignored; no scopes.
    const std::string token =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    expect_problem(verify(token, "your-256-bit-secret", kNow), TokenProblem::Malformed,
                   "JSON error: missing field `scopes`");
    expect_problem(verify(token, "your-256-bit-secreT", kNow), TokenProblem::BadSignature, "InvalidSignature");
}

TEST(JwtVerify, AcceptsATokenSignedByTheOpensslCommandLine) {
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const auto token = cli_signed_token(R"({"alg":"HS256"})",
                                        R"({"scopes":["cpu-read"],"sub":"carol","extra":{"x":1},"exp":null})", kKey);
    EXPECT_EQ(verify(token, kKey, kNow).value(), (Claims{"carol", {ApiGroup::CpuRead}, std::nullopt}));
}

// --- Verifying: structure ----------------------------------------------------

TEST(JwtVerify, RefusesTokensWithoutExactlyThreeParts) {
    const auto token = sign(alice(), kKey).value();
    for (const std::string& bad : {std::string(), std::string("abc"), part(token, 0) + "." + part(token, 1),
                                   token + ".x", std::string("...")}) {
        expect_problem(verify(bad, kKey, kNow), TokenProblem::Malformed, "InvalidToken");
    }
    // Three empty parts are three parts: the empty header is what fails.
    expect_problem(verify("..", kKey, kNow), TokenProblem::Malformed, "JSON error: the header is not a JSON object");
}

TEST(JwtVerify, RefusesBadBase64InTheHeader) {
    const auto token = sign(alice(), kKey).value();
    expect_problem(verify("e*J." + part(token, 1) + "." + part(token, 2), kKey, kNow), TokenProblem::Malformed,
                   "Base64 error: Invalid symbol 42, offset 1.");
}

TEST(JwtVerify, RefusesAHeaderThatIsNotAJsonObject) {
    const auto token = sign(alice(), kKey).value();
    const auto rest = "." + part(token, 1) + "." + part(token, 2);
    expect_problem(verify(base64url_encode("not json") + rest, kKey, kNow), TokenProblem::Malformed,
                   "JSON error: the header is not a JSON object");
    expect_problem(verify(base64url_encode("[1]") + rest, kKey, kNow), TokenProblem::Malformed,
                   "JSON error: the header is not a JSON object");
    expect_problem(verify(base64url_encode(R"({"typ":"JWT"})") + rest, kKey, kNow), TokenProblem::Malformed,
                   "JSON error: missing field `alg`");
}

// --- Verifying: algorithm -----------------------------------------------------

TEST(JwtVerify, RefusesAlgNoneEvenWithoutASignature) {
    const auto payload = base64url_encode(R"({"sub":"mallory","scopes":["gpu-control"]})");
    const auto none = base64url_encode(R"({"alg":"none","typ":"JWT"})");
    expect_problem(verify(none + "." + payload + ".", kKey, kNow), TokenProblem::WrongAlgorithm, "InvalidAlgorithm");
}

TEST(JwtVerify, RefusesOtherAlgorithmsWhateverTheSignature) {
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const std::string payload = R"({"sub":"mallory","scopes":["gpu-control"]})";
    // Correct HMAC-SHA256 under our key, but the header claims another alg.
    for (const char* alg : {"HS384", "HS512", "RS256", "hs256", ""}) {
        const auto token = cli_signed_token(std::string(R"({"alg":")") + alg + "\"}", payload, kKey);
        expect_problem(verify(token, kKey, kNow), TokenProblem::WrongAlgorithm, "InvalidAlgorithm");
    }
    expect_problem(verify(cli_signed_token(R"({"alg":256})", payload, kKey), kKey, kNow),
                   TokenProblem::WrongAlgorithm, "InvalidAlgorithm");
}

// --- Verifying: signature ----------------------------------------------------

TEST(JwtVerify, DetectsTamperingWithEachPart) {
    const auto token = sign(alice(), kKey).value();
    const auto header = part(token, 0);
    const auto payload = part(token, 1);
    const auto signature = part(token, 2);

    // The header with other bytes but still HS256: {"alg":"HS256","typ":"JWT"}.
    const auto other_header = base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
    expect_problem(verify(other_header + "." + payload + "." + signature, kKey, kNow), TokenProblem::BadSignature,
                   "InvalidSignature");

    // The payload granting more: gpu-control added.
    const auto elevated = base64url_encode(R"({"sub":"alice","scopes":["gpu-control"],"exp":1762864200})");
    expect_problem(verify(header + "." + elevated + "." + signature, kKey, kNow), TokenProblem::BadSignature,
                   "InvalidSignature");

    // One character of the signature changed, at the start and at the end.
    for (const std::size_t at : {std::size_t{0}, signature.size() - 2}) {
        auto altered = signature;
        altered[at] = altered[at] == 'A' ? 'B' : 'A';
        expect_problem(verify(header + "." + payload + "." + altered, kKey, kNow), TokenProblem::BadSignature,
                       "InvalidSignature");
    }

    // Truncated, padded, empty, or the same bytes spelled non-canonically.
    expect_problem(verify(header + "." + payload + "." + signature.substr(1), kKey, kNow),
                   TokenProblem::BadSignature, "InvalidSignature");
    expect_problem(verify(token + "=", kKey, kNow), TokenProblem::BadSignature, "InvalidSignature");
    expect_problem(verify(header + "." + payload + ".", kKey, kNow), TokenProblem::BadSignature, "InvalidSignature");
}

TEST(JwtVerify, RefusesTheWrongKey) {
    const auto token = sign(alice(), kKey).value();
    expect_problem(verify(token, "another key", kNow), TokenProblem::BadSignature, "InvalidSignature");
    expect_problem(verify(token, std::string(kKey) + "\n", kNow), TokenProblem::BadSignature, "InvalidSignature");
}

TEST(JwtVerify, ChecksTheSignatureBeforeTheClaims) {
    // A payload with an unknown scope, signed with another key: the answer is
    // the signature, so an outsider learns nothing about what we would accept.
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const auto token = cli_signed_token(R"({"alg":"HS256"})", R"({"sub":"x","scopes":["root"]})", "other");
    expect_problem(verify(token, kKey, kNow), TokenProblem::BadSignature, "InvalidSignature");
}

// --- Verifying: claims ------------------------------------------------------

class JwtClaims : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    }
    static Result<Claims> verify_payload(std::string_view payload_json) {
        return verify(cli_signed_token(R"({"typ":"JWT","alg":"HS256"})", payload_json, kKey), kKey, kNow);
    }
};

TEST_F(JwtClaims, RefusesAnUnknownScope) {
    expect_problem(verify_payload(R"({"sub":"x","scopes":["gpu-read","gpu-write"]})"), TokenProblem::UnknownScope,
                   "JSON error: unknown variant `gpu-write`, expected one of `gpu-control`, `gpu-read`, `cpu-read`");
    // Scope names are case-sensitive, as serde's kebab-case names are.
    expect_problem(verify_payload(R"({"sub":"x","scopes":["GPU-READ"]})"), TokenProblem::UnknownScope,
                   "JSON error: unknown variant `GPU-READ`, expected one of `gpu-control`, `gpu-read`, `cpu-read`");
}

TEST_F(JwtClaims, KeepsScopeOrderAndDuplicates) {
    EXPECT_EQ(verify_payload(R"({"sub":"x","scopes":["cpu-read","gpu-control","cpu-read"]})").value().scopes,
              (std::vector{ApiGroup::CpuRead, ApiGroup::GpuControl, ApiGroup::CpuRead}));
}

TEST_F(JwtClaims, RequiresSubAndScopesOfTheRightTypes) {
    expect_problem(verify_payload(R"({"scopes":[]})"), TokenProblem::Malformed, "JSON error: missing field `sub`");
    expect_problem(verify_payload(R"({"sub":"x"})"), TokenProblem::Malformed, "JSON error: missing field `scopes`");
    expect_problem(verify_payload(R"({"sub":7,"scopes":[]})"), TokenProblem::Malformed,
                   "JSON error: invalid type for `sub`, expected a string");
    expect_problem(verify_payload(R"({"sub":"x","scopes":"gpu-read"})"), TokenProblem::Malformed,
                   "JSON error: invalid type for `scopes`, expected a sequence");
    expect_problem(verify_payload(R"({"sub":"x","scopes":[1]})"), TokenProblem::Malformed,
                   "JSON error: invalid type for `scopes`, expected a sequence of strings");
    expect_problem(verify_payload("[]"), TokenProblem::Malformed, "JSON error: the payload is not a JSON object");
}

TEST_F(JwtClaims, ExpMustBeWholeNonNegativeSeconds) {
    for (const char* exp : {"-1", "1.5", "\"1762864200\"", "true", "1e30"}) {
        expect_problem(verify_payload(std::string(R"({"sub":"x","scopes":[],"exp":)") + exp + "}"),
                       TokenProblem::Malformed, "JSON error: invalid type for `exp`, expected an unsigned integer (unix seconds)");
    }
    EXPECT_EQ(verify_payload(R"({"sub":"x","scopes":[],"exp":null})").value().exp, std::nullopt);
    EXPECT_EQ(verify_payload(R"({"sub":"x","scopes":[],"exp":18446744073709551615})").value().exp,
              UnixSeconds{18446744073709551615ULL});
}

// A correctly signed token whose payload names a claim twice is refused:
// "last one wins" would let one reader see other scopes than another.
TEST_F(JwtClaims, RefusesADuplicatedKey) {
    expect_problem(verify_payload(R"({"sub":"x","scopes":["gpu-read"],"scopes":["gpu-control"]})"),
                   TokenProblem::Malformed,
                   "JSON error in the payload: the key \"scopes\" appears twice in one object; give each key once");
    expect_problem(verify_payload(R"({"sub":"x","sub":"y","scopes":[]})"), TokenProblem::Malformed,
                   "JSON error in the payload: the key \"sub\" appears twice in one object; give each key once");
    // The same key in two different objects is no duplicate.
    EXPECT_TRUE(verify_payload(R"({"sub":"x","scopes":[],"extra":{"sub":1}})").ok());
}

TEST_F(JwtClaims, RefusesAnAudience) {
    expect_problem(verify_payload(R"({"sub":"x","scopes":[],"aud":"elsewhere"})"), TokenProblem::Malformed,
                   "InvalidAudience");
}

// --- Verifying: expiry ------------------------------------------------------

TEST(JwtVerify, ExpiryHasSixtySecondsOfLeeway) {
    const auto at = [](UnixSeconds exp) { return sign(Claims{"alice", {}, exp}, kKey).value(); };
    EXPECT_TRUE(verify(at(kNow + 3600), kKey, kNow));
    EXPECT_TRUE(verify(at(kNow), kKey, kNow));
    EXPECT_TRUE(verify(at(kNow - kExpiryLeewaySeconds), kKey, kNow));
    expect_problem(verify(at(kNow - kExpiryLeewaySeconds - 1), kKey, kNow), TokenProblem::Expired, "ExpiredSignature");
    expect_problem(verify(at(0), kKey, kNow), TokenProblem::Expired, "ExpiredSignature");
}

TEST(JwtVerify, NoExpiryNeverExpires) {
    EXPECT_TRUE(verify(sign(Claims{"alice", {}, std::nullopt}, kKey).value(), kKey, UnixSeconds{1} << 62));
}

TEST(JwtVerify, ClockBeforeTheLeewayDoesNotWrapAround) {
    EXPECT_TRUE(verify(sign(Claims{"alice", {}, 0}, kKey).value(), kKey, 30));
}

TEST(JwtVerify, ClaimErrorsComeBeforeExpiry) {
    if (!have_openssl_cli()) GTEST_SKIP() << "openssl command-line tool not installed";
    const auto token = cli_signed_token(R"({"alg":"HS256"})", R"({"sub":"x","scopes":["nope"],"exp":1})", kKey);
    EXPECT_EQ(token_problem(verify(token, kKey, kNow).error()), TokenProblem::UnknownScope);
}

// --- token_problem ---------------------------------------------------------

TEST(JwtTokenProblem, IsNulloptForOtherErrors) {
    EXPECT_EQ(token_problem(Error{ErrorCode::InvalidConfig, "x", ""}), std::nullopt);
    EXPECT_EQ(token_problem(Error{ErrorCode::Unknown, "x", ""}), std::nullopt);
}

TEST(JwtUnixNow, IsAfter2024) { EXPECT_GT(unix_now(), UnixSeconds{1'704'067'200}); }

}  // namespace
}  // namespace zeus::zeusd
