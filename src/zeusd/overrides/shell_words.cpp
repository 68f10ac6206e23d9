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

}  // namespace

std::optional<std::vector<std::string>> split_shell_words(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    State state = State::Delimiter;
    const auto finish_word = [&] {
        words.push_back(std::move(word));
        word.clear();
    };
    for (const char c : line) {
        switch (state) {
            case State::Delimiter:
                if (c == '\'') state = State::SingleQuoted;
                else if (c == '"') state = State::DoubleQuoted;
                else if (c == '\\') state = State::Backslash;
                else if (c == '#') state = State::Comment;
                else if (!is_blank(c)) {
                    word.push_back(c);
                    state = State::Unquoted;
                }
                break;
            case State::Backslash:
                // A backslash-newline between words is a line continuation.
                if (c == '\n') {
                    state = State::Delimiter;
                } else {
                    word.push_back(c);
                    state = State::Unquoted;
                }
                break;
            case State::Unquoted:
                if (c == '\'') state = State::SingleQuoted;
                else if (c == '"') state = State::DoubleQuoted;
                else if (c == '\\') state = State::UnquotedBackslash;
                else if (is_blank(c)) {
                    finish_word();
                    state = State::Delimiter;
                } else {
                    word.push_back(c);
                }
                break;
            case State::UnquotedBackslash:
                if (c != '\n') word.push_back(c);
                state = State::Unquoted;
                break;
            case State::SingleQuoted:
                if (c == '\'') state = State::Unquoted;
                else word.push_back(c);
                break;
            case State::DoubleQuoted:
                if (c == '"') state = State::Unquoted;
                else if (c == '\\') state = State::DoubleQuotedBackslash;
                else word.push_back(c);
                break;
            case State::DoubleQuotedBackslash:
                // Inside double quotes only these characters are escapable;
                // before anything else the backslash stays.
                if (c == '$' || c == '`' || c == '"' || c == '\\') {
                    word.push_back(c);
                } else if (c != '\n') {
                    word.push_back('\\');
                    word.push_back(c);
                }
                state = State::DoubleQuoted;
                break;
            case State::Comment:
                if (c == '\n') state = State::Delimiter;
                break;
        }
    }
    switch (state) {
        case State::SingleQuoted:
        case State::DoubleQuoted:
        case State::DoubleQuotedBackslash: return std::nullopt;
        case State::Backslash:
        case State::UnquotedBackslash:
            // A trailing backslash is kept literally, as shell_words does.
            word.push_back('\\');
            finish_word();
            break;
        case State::Unquoted: finish_word(); break;
        case State::Delimiter:
        case State::Comment: break;
    }
    return words;
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
