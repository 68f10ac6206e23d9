#include "zeus/platform/environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace zeus {
namespace {

TEST(Environment, BooleanSpellings) {
    for (const char* yes : {"1", "true", "TRUE", "yes", "On"}) {
        setenv("ZEUS_TEST_BOOL", yes, 1);
        EXPECT_TRUE(get_env_bool("ZEUS_TEST_BOOL", false).value()) << yes;
    }
    for (const char* no : {"0", "false", "No", "off", ""}) {
        setenv("ZEUS_TEST_BOOL", no, 1);
        EXPECT_FALSE(get_env_bool("ZEUS_TEST_BOOL", true).value()) << no;
    }
    unsetenv("ZEUS_TEST_BOOL");
    EXPECT_TRUE(get_env_bool("ZEUS_TEST_BOOL", true).value());
}

TEST(Environment, MalformedBooleanNamesVariableAndFix) {
    setenv("ZEUS_TEST_BOOL", "maybe", 1);
    auto v = get_env_bool("ZEUS_TEST_BOOL", false);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().code, ErrorCode::InvalidConfig);
    EXPECT_NE(v.error().message.find("ZEUS_TEST_BOOL=\"maybe\""), std::string::npos);
    EXPECT_NE(v.error().hint.find("1 or 0"), std::string::npos);
    unsetenv("ZEUS_TEST_BOOL");
}

TEST(Environment, UnsetIsNotEmpty) {
    unsetenv("ZEUS_TEST_VALUE");
    EXPECT_FALSE(get_env("ZEUS_TEST_VALUE").has_value());
    setenv("ZEUS_TEST_VALUE", "", 1);
    ASSERT_TRUE(get_env("ZEUS_TEST_VALUE").has_value());
    EXPECT_EQ(*get_env("ZEUS_TEST_VALUE"), "");
    unsetenv("ZEUS_TEST_VALUE");
}

TEST(Errors, ResultValueThrowsTheError) {
    Result<int> bad = Error{ErrorCode::NotSupported, "no counter", "use power", 3};
    EXPECT_FALSE(bad.ok());
    try {
        (void)bad.value();
        FAIL() << "value() of an error must throw";
    } catch (const ZeusError& e) {
        EXPECT_EQ(e.code(), ErrorCode::NotSupported);
        EXPECT_STREQ(e.what(), "no counter (use power)");
    }
    Result<int> good = 7;
    EXPECT_EQ(good.value(), 7);
    EXPECT_EQ(bad.value_or(-1), -1);
}

}  // namespace
}  // namespace zeus
