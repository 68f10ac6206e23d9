#include "zeusd/auth/base64url.hpp"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

// RFC 4648 §10 test vectors, unpadded (base64 and base64url agree on them).
TEST(Base64Url, EncodesRfc4648Vectors) {
    EXPECT_EQ(base64url_encode(""), "");
    EXPECT_EQ(base64url_encode("f"), "Zg");
    EXPECT_EQ(base64url_encode("fo"), "Zm8");
    EXPECT_EQ(base64url_encode("foo"), "Zm9v");
    EXPECT_EQ(base64url_encode("foob"), "Zm9vYg");
    EXPECT_EQ(base64url_encode("fooba"), "Zm9vYmE");
    EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Url, UsesTheUrlSafeAlphabet) {
    // 0xFB 0xFF -> "+/8" in standard base64.
    EXPECT_EQ(base64url_encode("\xFB\xFF"), "-_8");
    EXPECT_EQ(base64url_decode("-_8").value(), "\xFB\xFF");
}

TEST(Base64Url, RoundTripsEveryByteValue) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t length = 0; length <= all.size(); length += 37) {
        const auto bytes = all.substr(0, length);
        EXPECT_EQ(base64url_decode(base64url_encode(bytes)).value(), bytes);
    }
}

TEST(Base64Url, RefusesPadding) {
    const auto decoded = base64url_decode("Zg==");
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().message, "Invalid padding");
    EXPECT_FALSE(decoded.error().hint.empty());
}

TEST(Base64Url, RefusesStandardAlphabetAndWhitespaceWithTheOffset) {
    EXPECT_EQ(base64url_decode("ab+d").error().message, "Invalid symbol 43, offset 2.");
    EXPECT_EQ(base64url_decode("ab/d").error().message, "Invalid symbol 47, offset 2.");
    EXPECT_EQ(base64url_decode("Zm9 v").error().message, "Invalid symbol 32, offset 3.");
    EXPECT_EQ(base64url_decode("Zm9v.").error().message, "Invalid symbol 46, offset 4.");
}

TEST(Base64Url, RefusesImpossibleLength) {
    EXPECT_EQ(base64url_decode("Zm9vY").error().message, "Invalid input length.");
}

TEST(Base64Url, RefusesNonCanonicalTrailingBits) {
    // "Zh" decodes to "f" too but leaves non-zero bits behind: a second
    // spelling of the same bytes, which a signature compare must not accept.
    EXPECT_EQ(base64url_decode("Zg").value(), "f");
    EXPECT_EQ(base64url_decode("Zh").error().message, "Invalid last symbol 104, offset 1.");
    EXPECT_EQ(base64url_decode("Zm9").error().message, "Invalid last symbol 57, offset 2.");
}

}  // namespace
}  // namespace zeus::zeusd
