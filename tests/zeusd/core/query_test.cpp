// Query strings as the original's serde_urlencoded reads them.
#include <gtest/gtest.h>

#include "zeusd/query.hpp"

namespace zeus::zeusd {
namespace {

Query checked(const std::string& target, std::initializer_list<std::string_view> allowed) {
    auto parsed = parse_target(target);
    EXPECT_TRUE(parsed.has_value()) << target;
    auto query = Query::check(*parsed, allowed);
    EXPECT_TRUE(std::holds_alternative<Query>(query)) << target;
    return std::get<Query>(std::move(query));
}

std::string check_error(const std::string& target, std::initializer_list<std::string_view> allowed) {
    auto query = Query::check(*parse_target(target), allowed);
    return std::holds_alternative<QueryError>(query) ? std::get<QueryError>(query).message : "";
}

TEST(QueryTest, TargetsArePercentDecoded) {
    const auto parsed = parse_target("/gpu/get%5Fpower?gpu%5Fids=0%2C1&x=a+b&&flag");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->path, "/gpu/get_power");
    ASSERT_EQ(parsed->parameters.size(), 3U);
    EXPECT_EQ(parsed->parameters[0], (std::pair<std::string, std::string>{"gpu_ids", "0,1"}));
    EXPECT_EQ(parsed->parameters[1], (std::pair<std::string, std::string>{"x", "a b"}));
    EXPECT_EQ(parsed->parameters[2], (std::pair<std::string, std::string>{"flag", ""}));
    for (const char* bad : {"/a?x=%", "/a?x=%4", "/a?x=%G0", "/a%"}) EXPECT_FALSE(parse_target(bad)) << bad;
}

TEST(QueryTest, UnknownAndRepeatedNamesNameTheField) {
    EXPECT_EQ(check_error("/p?a=1&zz=2", {"a", "b"}),
              "Query deserialize error: unknown field `zz`, expected one of `a`, `b`");
    EXPECT_EQ(check_error("/p?zz=2", {"a"}), "Query deserialize error: unknown field `zz`, expected `a`");
    EXPECT_EQ(check_error("/p?a=1&a=1", {"a"}), "Query deserialize error: duplicate field `a`");
}

TEST(QueryTest, NumbersAreUnsigned32BitDecimals) {
    auto query = checked("/p?n=4294967295", {"n"});
    EXPECT_EQ(query.required_u32("n"), 4294967295U);
    EXPECT_FALSE(query.error());
    const std::pair<const char*, const char*> bad[] = {
        {"/p?n=4294967296", "Query deserialize error: number too large to fit in target type"},
        {"/p?n=99999999999999999999999", "Query deserialize error: number too large to fit in target type"},
        {"/p?n=-1", "Query deserialize error: invalid digit found in string"},
        {"/p?n=1.5", "Query deserialize error: invalid digit found in string"},
        {"/p?n=+1", "Query deserialize error: invalid digit found in string"},
        {"/p?n=", "Query deserialize error: cannot parse integer from empty string"},
        {"/p", "Query deserialize error: missing field `n`"},
    };
    for (const auto& [target, message] : bad) {
        auto q = checked(target, {"n"});
        EXPECT_FALSE(q.required_u32("n")) << target;
        ASSERT_TRUE(q.error()) << target;
        EXPECT_EQ(q.error()->message, message) << target;
    }
}

TEST(QueryTest, BooleansAreExactlyTrueOrFalse) {
    auto query = checked("/p?a=true&b=false", {"a", "b"});
    EXPECT_EQ(query.required_bool("a"), true);
    EXPECT_EQ(query.required_bool("b"), false);
    for (const char* text : {"True", "1", "yes", ""}) {
        auto q = checked(std::string("/p?a=") + text, {"a"});
        EXPECT_FALSE(q.required_bool("a")) << text;
        EXPECT_EQ(q.error()->message, "Query deserialize error: provided string was not `true` or `false`");
    }
}

TEST(QueryTest, TheFirstFailureIsTheOneReported) {
    auto query = checked("/p?b=maybe", {"a", "b"});
    (void)query.required_u32("a");
    (void)query.required_bool("b");
    EXPECT_EQ(query.error()->message, "Query deserialize error: missing field `a`");
}

TEST(QueryTest, IdListsAreTrimmedSortedAndDeduplicated) {
    const auto ids = parse_id_list(" 3, 1 ,1,0 ", "gpu_ids", "GPU");
    ASSERT_TRUE(std::holds_alternative<std::vector<unsigned>>(ids));
    EXPECT_EQ(std::get<std::vector<unsigned>>(ids), (std::vector<unsigned>{0, 1, 3}));
    const std::pair<const char*, const char*> bad[] = {
        {"", "gpu_ids must contain at least one GPU index"},
        {"  ", "gpu_ids must contain at least one GPU index"},
        {"1,", "gpu_ids contains an empty GPU index"},
        {",1", "gpu_ids contains an empty GPU index"},
        {"1,a", "Invalid GPU index: a"},
        {"1 2", "Invalid GPU index: 1 2"},
        {"4294967296", "Invalid GPU index: 4294967296"},
    };
    for (const auto& [text, message] : bad) {
        const auto result = parse_id_list(text, "gpu_ids", "GPU");
        ASSERT_TRUE(std::holds_alternative<IdListError>(result)) << text;
        EXPECT_EQ(std::get<IdListError>(result).message, message) << text;
    }
    EXPECT_EQ(std::get<IdListError>(parse_id_list("x", "cpu_ids", "CPU")).message, "Invalid CPU index: x");
}

}  // namespace
}  // namespace zeus::zeusd
