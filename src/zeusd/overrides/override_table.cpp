#include "zeusd/overrides/override_table.hpp"

#include <limits>

#include <fmt/format.h>

#include "zeusd/overrides/placeholders.hpp"
#include "zeusd/overrides/shell_words.hpp"

namespace zeus::zeusd {
namespace {

constexpr std::string_view kValidKeys = "commands, error_pattern, timeout_s";

// Builds InvalidConfig errors that all start with the file and the table.
class TableErrors {
  public:
    TableErrors(std::string_view source_name, GpuCommand command) : source_(source_name), command_(command) {}

    [[nodiscard]] Error operator()(std::string_view what, const toml::node* where = nullptr) const {
        std::string line;
        if (where != nullptr && where->source().begin.line > 0) {
            line = fmt::format(" (line {})", where->source().begin.line);
        }
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("GPU command override file '{}': table '{}'{} {}", source_, to_string(command_),
                                 line, what),
                     "see docs/zeusd-overrides.md for the format"};
    }

  private:
    std::string_view source_;
    GpuCommand command_;
};

// "(?i)" is how the original's (Rust) patterns ask for case-insensitivity;
// ECMAScript has no inline flags, so that one prefix is honoured here.
Result<std::regex> compile_pattern(std::string_view text, const TableErrors& fail, const toml::node& where) {
    auto flags = std::regex::ECMAScript;
    std::string_view body = text;
    if (body.starts_with("(?i)")) {
        flags |= std::regex::icase;
        body.remove_prefix(4);
    }
    try {
        return std::regex(body.begin(), body.end(), flags);
    } catch (const std::regex_error& error) {
        return fail(fmt::format("has an invalid error_pattern '{}': {}", text, error.what()), &where);
    }
}

Result<std::vector<std::vector<std::string>>> parse_commands(GpuCommand command, const toml::node* node,
                                                             const TableErrors& fail) {
    if (node == nullptr) return fail("lacks 'commands' (a non-empty array of strings)");
    const auto* array = node->as_array();
    if (array == nullptr) return fail("has 'commands' that is not an array of strings", node);
    if (array->empty()) return fail("has an empty commands array", node);
    std::vector<std::vector<std::string>> commands;
    for (const auto& element : *array) {
        const auto* line = element.as_string();
        if (line == nullptr) return fail("has 'commands' with an element that is not a string", &element);
        const std::string& text = line->get();
        auto words = split_shell_words(text);
        if (!words) {
            return fail(fmt::format("has a command that cannot be split (unbalanced quote): {}", text), &element);
        }
        if (words->empty()) return fail(fmt::format("has a command that splits to zero tokens: '{}'", text), &element);
        for (const auto& word : *words) {
            if (const auto problem = check_placeholders(command, word)) {
                return fail(fmt::format("has command '{}' with {} in word '{}'", text, *problem, word), &element);
            }
        }
        commands.push_back(std::move(*words));
    }
    return commands;
}

}  // namespace

Result<OverrideTable> parse_override_table(GpuCommand command, const toml::table& table,
                                           std::string_view source_name) {
    const TableErrors fail(source_name, command);
    for (const auto& [key, node] : table) {
        if (key.str() != "commands" && key.str() != "error_pattern" && key.str() != "timeout_s") {
            return fail(fmt::format("has unknown key '{}'; valid keys: {}", key.str(), kValidKeys), &node);
        }
    }

    OverrideTable parsed;
    parsed.command = command;
    auto commands = parse_commands(command, table.get("commands"), fail);
    if (!commands) return commands.error();
    parsed.commands = std::move(commands).value();

    if (const auto* node = table.get("error_pattern")) {
        const auto* text = node->as_string();
        if (text == nullptr) return fail("has an error_pattern that is not a string", node);
        auto pattern = compile_pattern(text->get(), fail, *node);
        if (!pattern) return pattern.error();
        parsed.error_pattern = std::move(pattern).value();
        parsed.error_pattern_text = text->get();
    }

    if (const auto* node = table.get("timeout_s")) {
        const auto* seconds = node->as_integer();
        if (seconds == nullptr) return fail("has a timeout_s that is not an integer number of seconds", node);
        if (seconds->get() == 0) {
            return fail("has timeout_s = 0, which would kill every command immediately", node);
        }
        if (seconds->get() < 0) {
            return fail(fmt::format("has timeout_s = {}; it must be a positive number of seconds", seconds->get()),
                        node);
        }
        parsed.timeout = std::chrono::seconds(seconds->get());
    }
    return parsed;
}

}  // namespace zeus::zeusd
