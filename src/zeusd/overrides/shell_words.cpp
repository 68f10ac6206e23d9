#include "zeusd/overrides/shell_words.hpp"

namespace zeus::zeusd {
namespace {

enum class State {
    Delimiter,              // between words
    Backslash,              // a backslash that starts a word
    Unquoted,               // inside a word, outside quotes
    UnquotedBackslash,      // a backslash inside a word
    SingleQuoted,
    DoubleQuoted,
    DoubleQuotedBackslash,
    Comment,
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// The line read one character at a time; each state has its own step.
class WordSplitter {
  public:
    void feed(char c) {
        switch (state_) {
            case State::Delimiter:
                between_words(c);
                break;
            case State::Backslash:
                after_leading_backslash(c);
                break;
            case State::Unquoted:
                in_word(c);
                break;
            case State::UnquotedBackslash:
                if (c != '\n') word_.push_back(c);
                state_ = State::Unquoted;
                break;
            case State::SingleQuoted:
                if (c == '\'')
                    state_ = State::Unquoted;
                else
                    word_.push_back(c);
                break;
            case State::DoubleQuoted:
                in_double_quotes(c);
                break;
            case State::DoubleQuotedBackslash:
                after_double_quoted_backslash(c);
                break;
            case State::Comment:
                if (c == '\n') state_ = State::Delimiter;
                break;
        }
    }

    std::optional<std::vector<std::string>> finish() {
        switch (state_) {
            case State::SingleQuoted:
            case State::DoubleQuoted:
            case State::DoubleQuotedBackslash:
                return std::nullopt;
            case State::Backslash:
            case State::UnquotedBackslash:
                // A trailing backslash is kept literally, as shell_words does.
                word_.push_back('\\');
                finish_word();
                break;
            case State::Unquoted:
                finish_word();
                break;
            case State::Delimiter:
            case State::Comment:
                break;
        }
        return std::move(words_);
    }

  private:
    void between_words(char c) {
        if (c == '\'')
            state_ = State::SingleQuoted;
        else if (c == '"')
            state_ = State::DoubleQuoted;
        else if (c == '\\')
            state_ = State::Backslash;
        else if (c == '#')
            state_ = State::Comment;
        else if (!is_blank(c)) {
            word_.push_back(c);
            state_ = State::Unquoted;
        }
    }

    void after_leading_backslash(char c) {
        // A backslash-newline between words is a line continuation.
        if (c == '\n') {
            state_ = State::Delimiter;
        } else {
            word_.push_back(c);
            state_ = State::Unquoted;
        }
    }

    void in_word(char c) {
        if (c == '\'')
            state_ = State::SingleQuoted;
        else if (c == '"')
            state_ = State::DoubleQuoted;
        else if (c == '\\')
            state_ = State::UnquotedBackslash;
        else if (is_blank(c)) {
            finish_word();
            state_ = State::Delimiter;
        } else {
            word_.push_back(c);
        }
    }

    void in_double_quotes(char c) {
        if (c == '"')
            state_ = State::Unquoted;
        else if (c == '\\')
            state_ = State::DoubleQuotedBackslash;
        else
            word_.push_back(c);
    }

    void after_double_quoted_backslash(char c) {
        // Inside double quotes only these characters are escapable; before
        // anything else the backslash stays.
        if (c == '$' || c == '`' || c == '"' || c == '\\') {
            word_.push_back(c);
        } else if (c != '\n') {
            word_.push_back('\\');
            word_.push_back(c);
        }
        state_ = State::DoubleQuoted;
    }

    void finish_word() {
        words_.push_back(std::move(word_));
        word_.clear();
    }

    std::vector<std::string> words_;
    std::string word_;
    State state_ = State::Delimiter;
};

}  // namespace

std::optional<std::vector<std::string>> split_shell_words(std::string_view line) {
    WordSplitter splitter;
    for (const char c : line) splitter.feed(c);
    return splitter.finish();
}

std::string quote_shell_word(std::string_view word) {
    if (word.empty()) return "''";
    const auto safe = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view(",._+:@%/-=").find(c) != std::string_view::npos;
    };
    bool all_safe = true;
    for (const char c : word) all_safe = all_safe && safe(c);
    if (all_safe) return std::string(word);
    std::string quoted = "'";
    for (const char c : word) {
        if (c == '\'') quoted += "'\\''";  // close, escaped quote, reopen
        else quoted.push_back(c);
    }
    quoted.push_back('\'');
    return quoted;
}

std::string join_shell_words(std::span<const std::string> words) {
    std::string line;
    for (const auto& word : words) {
        if (!line.empty()) line.push_back(' ');
        line += quote_shell_word(word);
    }
    return line;
}

}  // namespace zeus::zeusd
