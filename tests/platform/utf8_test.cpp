#include "zeus/platform/utf8.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace zeus {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

// Well-formed UTF-8 per Unicode table 3-7: one example of each row's edges.
TEST(Utf8, AcceptsWellFormedText) {
    for (const std::string text : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC", "\xED\x9F\xBF", "\xEE\x80\x80",
                                   "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\xE6\x97\xA5\xE6\x9C\xAC"}) {
        EXPECT_TRUE(is_utf8(text)) << text;
        EXPECT_EQ(to_utf8(text), text);
    }
}

TEST(Utf8, FindsTheFirstByteThatIsNot) {
    EXPECT_EQ(first_invalid_utf8("ab\xFF"), 2U);
    EXPECT_EQ(first_invalid_utf8("\xC3"), 0U);              // truncated sequence
    EXPECT_EQ(first_invalid_utf8("a\xC0\x80"), 1U);         // overlong NUL
    EXPECT_EQ(first_invalid_utf8("\xE0\x80\x80"), 0U);      // overlong 3-byte
    EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0U);      // surrogate U+D800
    EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0U);  // above U+10FFFF
    EXPECT_EQ(first_invalid_utf8("\xF5\x80\x80\x80"), 0U);
    EXPECT_EQ(first_invalid_utf8("\xC3\xA9\x80"), 2U);  // stray continuation
    EXPECT_EQ(first_invalid_utf8("\xE2\x82"
                                 "x"),
              0U);  // sequence cut by ASCII
}

TEST(Utf8, ReplacesEachInvalidByteAndKeepsTheRest) {
    EXPECT_EQ(to_utf8("a\xFF"
                      "b"),
              "a" + kReplacement + "b");
    EXPECT_EQ(to_utf8("\xE2\x82"
                      "x"),
              kReplacement + kReplacement + "x");
    EXPECT_EQ(to_utf8("\xC3\xA9\xFE"), "\xC3\xA9" + kReplacement);
    EXPECT_TRUE(is_utf8(to_utf8("\xED\xA0\x80\xC0\xAF\xF8")));
}

// The JSON writer's replacement and ours agree, so a value reads the same in
// every format.
TEST(Utf8, JsonTextReplacesInsteadOfThrowing) {
    const nlohmann::json doc{{"argv", {"true", "\xFF", "caf\xC3\xA9"}}};
    EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
    const std::string text = json_text(doc);
    const nlohmann::json replaced{{"argv", {"true", to_utf8("\xFF"), "caf\xC3\xA9"}}};
    EXPECT_EQ(text, replaced.dump());
    EXPECT_EQ(nlohmann::json::parse(text)["argv"][1], kReplacement);
    EXPECT_EQ(json_text(nlohmann::ordered_json{{"a", "b\xC3"}}, 2), "{\n  \"a\": \"b" + kReplacement + "\"\n}");
}

TEST(Utf8, TerminalSafeEscapesControlsAndInvalidBytes) {
    EXPECT_EQ(terminal_safe("plain text, caf\xC3\xA9"), "plain text, caf\xC3\xA9");
    EXPECT_EQ(terminal_safe("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    EXPECT_EQ(terminal_safe("\x1b[2J"), "\\e[2J");  // clear screen
    EXPECT_EQ(terminal_safe(std::string("\x00\x07\x7f", 3)), "\\x00\\x07\\x7f");
    EXPECT_EQ(terminal_safe("\xC2\x9B"
                            "31m"),
              "\\x9b31m");                             // C1 CSI
    EXPECT_EQ(terminal_safe("\xC2\xA0"), "\xC2\xA0");  // no-break space is printable
    EXPECT_EQ(terminal_safe("\xFF\xFE"), "\\xff\\xfe");
    const std::string escaped = terminal_safe("x\x1b\xFF\x01\xC2\x85");
    EXPECT_TRUE(is_utf8(escaped));
    for (const char c : escaped) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << escaped;
}

TEST(Utf8, TerminalSafeLinesKeepsLineBreaks) {
    EXPECT_EQ(terminal_safe_lines("Command:  a\x1b]0;x\x07\nTime:\t1 s\n"), "Command:  a\\e]0;x\\x07\nTime:\\t1 s\n");
    EXPECT_EQ(terminal_safe_lines("no break \xFF"), "no break \\xff");
    EXPECT_EQ(terminal_safe_lines("\n\n"), "\n\n");
}

TEST(Utf8, RequireUtf8NamesTheInputAndTheByte) {
    EXPECT_TRUE(require_utf8("--job", "training"));
    EXPECT_TRUE(require_utf8("--job", "\xE5\xAD\xA6\xE7\xBF\x92"));
    const Status refused = require_utf8("--job", "train\xFF\x1b");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(refused.error().message, "--job 'train\\xff\\e' is not UTF-8 (byte 0xff at offset 5)");
    EXPECT_NE(refused.error().hint.find("give --job in UTF-8"), std::string::npos);
    EXPECT_TRUE(is_utf8(refused.error().describe()));
}

}  // namespace
}  // namespace zeus
