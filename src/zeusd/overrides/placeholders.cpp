#include "zeusd/overrides/placeholders.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace zeus::zeusd {

std::optional<std::string> check_placeholders(GpuCommand command, std::string_view word) {
    std::size_t index = 0;
    while (index < word.size()) {
        if (word[index] == '}') return std::string("unbalanced brace '}'");
        if (word[index] != '{') {
            ++index;
            continue;
        }
        const auto end = word.find_first_of("{}", index + 1);
        if (end == std::string_view::npos || word[end] != '}') return std::string("unbalanced brace '{'");
        const auto name = word.substr(index + 1, end - index - 1);
        if (name.empty()) return std::string("empty placeholder '{}'");
        const auto allowed = allowed_placeholders(command);
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            std::string valid;
            for (const auto known : allowed) valid += fmt::format("{}{{{}}}", valid.empty() ? "" : ", ", known);
            return fmt::format("unknown placeholder '{{{}}}' (valid here: {})", name, valid);
        }
        index = end + 1;
    }
    return std::nullopt;
}

Result<std::string> substitute_placeholders(std::string_view word, const CommandArguments& arguments) {
    std::string result;
    std::size_t index = 0;
    while (index < word.size()) {
        const auto open = word.find('{', index);
        if (open == std::string_view::npos) break;
        const auto close = word.find('}', open);
        if (close == std::string_view::npos) break;  // cannot happen after check_placeholders
        result.append(word.substr(index, open - index));
        const auto name = word.substr(open + 1, close - open - 1);
        const auto value = placeholder_value(name, arguments);
        if (!value) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("no value for placeholder '{{{}}}'", name), {}};
        }
        result += *value;
        index = close + 1;
    }
    result.append(word.substr(index));
    return result;
}

}  // namespace zeus::zeusd
