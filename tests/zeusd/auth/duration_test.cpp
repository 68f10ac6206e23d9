#include "zeusd/auth/duration.hpp"

#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

HumanDuration seconds(std::uint64_t s, std::uint32_t ns = 0) { return HumanDuration{s, ns}; }

std::string error_of(std::string_view text) {
    const auto parsed = parse_human_duration(text);
    return parsed ? std::string("<parsed>") : parsed.error().message;
}

// humantime's own unit tests (test_units), the same values.
TEST(HumanDuration, ParsesEveryUnitLikeHumantime) {
    const std::pair<const char*, HumanDuration> cases[] = {
        {"17nsec", seconds(0, 17)},      {"17nanos", seconds(0, 17)},     {"33ns", seconds(0, 33)},
        {"3usec", seconds(0, 3000)},     {"78us", seconds(0, 78000)},     {"31msec", seconds(0, 31'000'000)},
        {"31millis", seconds(0, 31'000'000)}, {"6ms", seconds(0, 6'000'000)}, {"3000s", seconds(3000)},
        {"300sec", seconds(300)},        {"300secs", seconds(300)},       {"50seconds", seconds(50)},
        {"1second", seconds(1)},         {"100m", seconds(6000)},         {"12min", seconds(720)},
        {"12mins", seconds(720)},        {"1minute", seconds(60)},        {"7minutes", seconds(420)},
        {"2h", seconds(7200)},           {"7hr", seconds(25200)},         {"7hrs", seconds(25200)},
        {"1hour", seconds(3600)},        {"24hours", seconds(86400)},     {"1day", seconds(86400)},
        {"2days", seconds(172'800)},     {"365d", seconds(31'536'000)},   {"1week", seconds(604'800)},
        {"7weeks", seconds(4'233'600)},  {"52w", seconds(31'449'600)},    {"1month", seconds(2'630'016)},
        {"3months", seconds(3 * 2'630'016)}, {"12M", seconds(31'560'192)}, {"1year", seconds(31'557'600)},
        {"7years", seconds(7 * 31'557'600)}, {"17y", seconds(536'479'200)},
    };
    for (const auto& [text, expected] : cases) {
        const auto parsed = parse_human_duration(text);
        ASSERT_TRUE(parsed) << text << ": " << parsed.error().message;
        EXPECT_EQ(parsed.value(), expected) << text;
    }
}

TEST(HumanDuration, AddsSpansWithOrWithoutSpaces) {
    EXPECT_EQ(parse_human_duration("1h 30m").value(), seconds(5400));
    EXPECT_EQ(parse_human_duration("1h30m").value(), seconds(5400));
    EXPECT_EQ(parse_human_duration("2h 15m").value(), seconds(8100));
    EXPECT_EQ(parse_human_duration("20 min 17 nsec ").value(), seconds(1200, 17));
    EXPECT_EQ(parse_human_duration("  7d").value(), seconds(604'800));
    EXPECT_EQ(parse_human_duration("2weeks").value(), seconds(1'209'600));
    EXPECT_EQ(parse_human_duration("1d\t12h").value(), seconds(129'600));
    // humantime skips spaces inside a number.
    EXPECT_EQ(parse_human_duration("1 0s").value(), seconds(10));
}

TEST(HumanDuration, CarriesNanosecondsIntoSeconds) {
    EXPECT_EQ(parse_human_duration("999ms 1ms").value(), seconds(1));
    EXPECT_EQ(parse_human_duration("1500ms").value(), seconds(1, 500'000'000));
    EXPECT_EQ(parse_human_duration("1s 2000000000ns").value(), seconds(3));
}

TEST(HumanDuration, UnitsAreCaseSensitive) {
    EXPECT_EQ(parse_human_duration("1M").value(), seconds(2'630'016));
    EXPECT_EQ(parse_human_duration("1m").value(), seconds(60));
    EXPECT_EQ(error_of("1H"),
              "unknown time unit \"H\", supported units: ns, us, ms, sec, min, hours, days, weeks, months, years "
              "(and few variations)");
}

TEST(HumanDuration, ReportsErrorsInHumantimesWords) {
    EXPECT_EQ(error_of(""), "value was empty");
    EXPECT_EQ(error_of("   "), "value was empty");
    EXPECT_EQ(error_of("123"), "time unit needed, for example 123sec or 123ms");
    EXPECT_EQ(error_of("10 months 1"), "time unit needed, for example 1sec or 1ms");
    EXPECT_EQ(error_of("7 days"), "<parsed>");
    EXPECT_EQ(error_of("never"), "expected number at 0");
    EXPECT_EQ(error_of("2 hours min"), "expected number at 8");
    EXPECT_EQ(error_of("-5m"), "expected number at 0");
    EXPECT_EQ(error_of("1.5h"), "invalid character at 1");
    EXPECT_EQ(error_of("5m!"), "invalid character at 2");
    EXPECT_EQ(error_of("5 fortnights"),
              "unknown time unit \"fortnights\", supported units: ns, us, ms, sec, min, hours, days, weeks, "
              "months, years (and few variations)");
    EXPECT_EQ(error_of("5\xC2\xB5s"), "invalid character at 1");
}

TEST(HumanDuration, RefusesOverflow) {
    // humantime's test_overlow cases.
    for (const char* text : {"100000000000000000000ns", "100000000000000000us", "100000000000000ms",
                             "100000000000000000000s", "10000000000000000000m", "1000000000000000000h",
                             "100000000000000000d", "10000000000000000w", "1000000000000000M", "10000000000000y"}) {
        EXPECT_EQ(error_of(text), "number is too large") << text;
    }
    EXPECT_EQ(error_of("18446744073709551615s 1s"), "number is too large");
    EXPECT_EQ(parse_human_duration("18446744073709551615s").value(), seconds(18'446'744'073'709'551'615ULL));
}

TEST(ParseExpires, NeverAndZeroMeanNoExpiry) {
    EXPECT_EQ(parse_expires("never").value(), std::nullopt);
    EXPECT_EQ(parse_expires("0").value(), std::nullopt);
}

TEST(ParseExpires, IsTheLifetimeInWholeSeconds) {
    EXPECT_EQ(parse_expires("7d").value(), std::optional<std::uint64_t>(604'800));
    EXPECT_EQ(parse_expires("12h").value(), std::optional<std::uint64_t>(43'200));
    EXPECT_EQ(parse_expires("30m").value(), std::optional<std::uint64_t>(1800));
    EXPECT_EQ(parse_expires("90s").value(), std::optional<std::uint64_t>(90));
    EXPECT_EQ(parse_expires("1h 30m").value(), std::optional<std::uint64_t>(5400));
    EXPECT_EQ(parse_expires("1500ms").value(), std::optional<std::uint64_t>(1));
    // Only the literal "0" is special: "0s" is a token that expires at once.
    EXPECT_EQ(parse_expires("0s").value(), std::optional<std::uint64_t>(0));
}

TEST(ParseExpires, ErrorsNameTheValueTheProblemAndTheSyntax) {
    for (const char* text : {"", "Never", "00", "7", "7 days later!", "forever"}) {
        const auto parsed = parse_expires(text);
        ASSERT_FALSE(parsed) << text;
        EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
        EXPECT_EQ(parsed.error().message.rfind(std::string("invalid --expires value '") + text + "': ", 0), 0U)
            << parsed.error().message;
        EXPECT_NE(parsed.error().hint.find("7d"), std::string::npos);
        EXPECT_NE(parsed.error().hint.find("never"), std::string::npos);
    }
    EXPECT_EQ(parse_expires("7").error().message,
              "invalid --expires value '7': time unit needed, for example 7sec or 7ms");
}

}  // namespace
}  // namespace zeus::zeusd
