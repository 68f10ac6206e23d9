#include "zeusd/auth/signing_key.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace zeus::zeusd {
namespace {

using testing::TempDir;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(SigningKey, IsTheFilesRawBytes) {
    const TempDir dir;
    const std::string bytes("secret\n\x00\xFF tail \n", 16);
    EXPECT_EQ(load_signing_key(dir.file("key", bytes)).value(), bytes);
}

TEST(SigningKey, ReadsLargeKeys) {
    const TempDir dir;
    const std::string bytes(100'000, 'k');
    EXPECT_EQ(load_signing_key(dir.file("key", bytes)).value(), bytes);
}

TEST(SigningKey, RefusesAnEmptyFile) {
    const TempDir dir;
    const auto path = dir.file("empty-key", "");
    const auto key = load_signing_key(path);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().code, ErrorCode::InvalidConfig);
    EXPECT_EQ(key.error().message, "signing key file '" + path + "' is empty");
    EXPECT_TRUE(contains(key.error().hint, "openssl rand -out " + path + " 32"));
}

TEST(SigningKey, NamesAMissingPathAndHowToCreateIt) {
    const TempDir dir;
    const auto path = (dir.path() / "no-such-key").string();
    const auto key = load_signing_key(path);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().code, ErrorCode::NotFound);
    EXPECT_EQ(key.error().message, "cannot use the signing key file '" + path + "': it does not exist");
    EXPECT_TRUE(contains(key.error().hint, "--signing-key-path"));
    EXPECT_TRUE(contains(key.error().hint, "openssl rand"));
}

TEST(SigningKey, NamesAnUnreadableFile) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
    const TempDir dir;
    const auto path = dir.file("locked-key", "secret");
    ASSERT_EQ(::chmod(path.c_str(), 0), 0);
    const auto key = load_signing_key(path);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().code, ErrorCode::NoPermission);
    EXPECT_EQ(key.error().message, "cannot use the signing key file '" + path + "': it cannot be opened: Permission denied");
    EXPECT_TRUE(contains(key.error().hint, "root"));
}

TEST(SigningKey, RefusesAKeyOtherUsersCanRead) {
    const TempDir dir;
    const auto path = dir.file("key", "secret");
    for (const auto mode : {0644, 0640, 0604, 0620}) {
        ASSERT_EQ(::chmod(path.c_str(), static_cast<mode_t>(mode)), 0);
        const auto key = load_signing_key(path);
        ASSERT_FALSE(key) << std::oct << mode;
        EXPECT_EQ(key.error().code, ErrorCode::InvalidConfig);
        EXPECT_TRUE(contains(key.error().message, "mint tokens")) << key.error().message;
        EXPECT_TRUE(contains(key.error().hint, "chmod 600 '" + path + "'")) << key.error().hint;
    }
    ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
    EXPECT_EQ(load_signing_key(path).value(), "secret");
}

TEST(SigningKey, RefusesADirectory) {
    const TempDir dir;
    const auto key = load_signing_key(dir.path().string());
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().message, "cannot use the signing key file '" + dir.path().string() + "': it is a directory, not a file");
    EXPECT_TRUE(contains(key.error().hint, "--signing-key-path"));
}

}  // namespace
}  // namespace zeus::zeusd
