// The splitter must give the same argv as the Rust shell_words crate, so that
// override files written for the original daemon behave the same here.
#include <gtest/gtest.h>

#include "zeusd/overrides/shell_words.hpp"

namespace zeus::zeusd {
namespace {

using Words = std::vector<std::string>;

Words split(std::string_view line) {
    auto words = split_shell_words(line);
    EXPECT_TRUE(words.has_value()) << line;
    return words.value_or(Words{});
}

TEST(ShellWords, SplitsOnBlanks) {
    EXPECT_EQ(split("nvidia-smi  -i {gpu_id}\t-pl\n{power_limit_w}"),
              (Words{"nvidia-smi", "-i", "{gpu_id}", "-pl", "{power_limit_w}"}));
    EXPECT_EQ(split("   "), Words{});
    EXPECT_EQ(split(""), Words{});
}

TEST(ShellWords, SingleQuotesKeepEverything) {
    EXPECT_EQ(split(R"(echo 'a  b' 'c\"d' '$x')"), (Words{"echo", "a  b", R"(c\"d)", "$x"}));
    EXPECT_EQ(split("''"), Words{""});
}

TEST(ShellWords, DoubleQuotesEscapeOnlyFourCharacters) {
    EXPECT_EQ(split(R"("a \"b\" \\ \$ \` \n")"), (Words{R"(a "b" \ $ ` \n)"}));
    EXPECT_EQ(split("\"line\\\ncontinued\""), Words{"linecontinued"});
    EXPECT_EQ(split(R"("")"), Words{""});
}

TEST(ShellWords, BackslashOutsideQuotesKeepsTheNextCharacter) {
    EXPECT_EQ(split(R"(a\ b \'c \\)"), (Words{"a b", "'c", "\\"}));
    EXPECT_EQ(split("a\\\nb"), Words{"ab"});
    EXPECT_EQ(split("a \\\n b"), (Words{"a", "b"}));
    // A trailing backslash stays, as in shell_words.
    EXPECT_EQ(split("a\\"), Words{"a\\"});
    EXPECT_EQ(split("a \\"), (Words{"a", "\\"}));
}

TEST(ShellWords, QuotesJoinAdjacentText) {
    EXPECT_EQ(split(R"(--name='my gpu'"s"x)"), Words{"--name=my gpusx"});
}

TEST(ShellWords, HashStartsACommentOnlyAtAWordStart) {
    EXPECT_EQ(split("tool a#b # a comment\nnext"), (Words{"tool", "a#b", "next"}));
}

TEST(ShellWords, UnbalancedQuotesAreErrors) {
    EXPECT_FALSE(split_shell_words("control '").has_value());
    EXPECT_FALSE(split_shell_words("control \"abc").has_value());
    EXPECT_FALSE(split_shell_words("control \"abc\\").has_value());
}

TEST(ShellWords, QuotingRoundTrips) {
    const Words words = {"plain", "", "with space", "it's", "$HOME", "a\"b", "-x=1,2:3/4@5%"};
    EXPECT_EQ(split(join_shell_words(words)), words);
    EXPECT_EQ(quote_shell_word("plain-word_1.0"), "plain-word_1.0");
    EXPECT_EQ(quote_shell_word("it's"), R"('it'\''s')");
}

}  // namespace
}  // namespace zeus::zeusd
