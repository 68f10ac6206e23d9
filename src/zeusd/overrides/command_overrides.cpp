#include "zeusd/overrides/command_overrides.hpp"

#include <array>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "zeusd/overrides/child_process.hpp"
#include "zeusd/overrides/deep_regex_search.hpp"
#include "zeusd/overrides/file_trust.hpp"
#include "zeusd/overrides/output_text.hpp"
#include "zeusd/overrides/override_table.hpp"
#include "zeusd/overrides/placeholders.hpp"
#include "zeusd/overrides/shell_words.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::zeusd {
namespace {

// How long output is still collected after a command ends (the original's).
constexpr auto kOutputGrace = std::chrono::seconds(1);
// How much of each stream an error message quotes.
constexpr std::size_t kQuotedOutputBytes = 1024;

std::string valid_tables() {
    std::string names;
    for (const auto command : kAllGpuCommands) {
        if (!names.empty()) names += ", ";
        names += to_string(command);
    }
    return names;
}

// sigabbrev_np rather than strsignal: it is thread-safe.
std::string_view signal_name(int signal) {
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? name : "?";
}

Error file_error(std::string_view source_name, std::string what) {
    return Error{ErrorCode::InvalidConfig,
                 fmt::format("GPU command override file '{}': {}", source_name, what),
                 "see docs/zeusd-overrides.md for the format"};
}

// Why a finished command counts as failed; nullopt when it succeeded.
std::optional<std::pair<ErrorCode, std::string>> failure_reason(const ChildResult& child,
                                                                const OverrideTable& table) {
    using End = ChildResult::End;
    switch (child.end) {
        case End::SpawnFailed:
            return std::pair{ErrorCode::OperatingSystem,
                             fmt::format("could not be spawned: {}", std::strerror(child.os_error))};
        case End::WaitFailed:
            return std::pair{ErrorCode::OperatingSystem,
                             fmt::format("could not be waited on: {}", std::strerror(child.os_error))};
        case End::TimedOut: {
            std::string reason = fmt::format("timed out after {}s", table.timeout.count());
            if (!child.kill_problem.empty()) reason += " and " + child.kill_problem;
            return std::pair{ErrorCode::Timeout, std::move(reason)};
        }
        case End::Signaled:
            return std::pair{ErrorCode::OperatingSystem,
                             fmt::format("was killed by signal {} (SIG{})", child.signal, signal_name(child.signal))};
        case End::Exited:
            if (child.exit_code != 0) {
                return std::pair{ErrorCode::OperatingSystem, fmt::format("exited with code {}", child.exit_code)};
            }
            break;
    }
    if (!table.error_pattern) return std::nullopt;
    // A pattern cannot be trusted to be absent from output that was cut short.
    if (!child.output_problem.empty()) {
        return std::pair{ErrorCode::OperatingSystem,
                         "succeeded but its output could not be collected, so error_pattern could not be checked (" +
                             child.output_problem + ")"};
    }
    const auto matched = deep_regex_search(*table.error_pattern, child.stdout_text + child.stderr_text);
    if (!matched) {
        return std::pair{ErrorCode::OperatingSystem,
                         fmt::format("succeeded but error_pattern '{}' could not be checked against its output",
                                     table.error_pattern_text)};
    }
    if (*matched) {
        return std::pair{ErrorCode::OperatingSystem,
                         fmt::format("succeeded but its output matched error_pattern '{}'", table.error_pattern_text)};
    }
    return std::nullopt;
}

Status run_one(const std::vector<std::string>& argv, const OverrideTable& table) {
    const ChildResult child = run_child(argv, table.timeout, kOutputGrace);
    auto failure = failure_reason(child, table);
    if (!failure) return {};
    auto& [code, reason] = *failure;
    std::string message =
        fmt::format("{} override: command '{}' {}; stdout: {}; stderr: {}", to_string(table.command),
                    to_utf8(join_shell_words(argv)), reason, output_tail(child.stdout_text, kQuotedOutputBytes),
                    output_tail(child.stderr_text, kQuotedOutputBytes));
    return Error{code, std::move(message),
                 fmt::format("check the [{}] table of the GPU command override file and the tool it runs",
                             to_string(table.command))};
}

}  // namespace

struct CommandOverrides::State {
    std::array<std::optional<OverrideTable>, kAllGpuCommands.size()> tables;
    std::vector<std::string> warnings;

    [[nodiscard]] const std::optional<OverrideTable>& table(GpuCommand command) const {
        return tables[static_cast<std::size_t>(command)];
    }
};

CommandOverrides::CommandOverrides() : state_(std::make_shared<const State>()) {}

CommandOverrides::CommandOverrides(std::shared_ptr<const State> state) : state_(std::move(state)) {}

Result<CommandOverrides> CommandOverrides::load(const std::string& path, uid_t daemon_euid) {
    auto file = read_trusted_file(path, daemon_euid);
    if (!file) return file.error();
    auto parsed = parse(file->contents, path);
    if (!parsed) return parsed.error();
    auto state = std::make_shared<State>(*parsed.value().state_);
    state->warnings = file->warnings;
    return CommandOverrides(std::move(state));
}

Result<CommandOverrides> CommandOverrides::parse(std::string_view toml_text, std::string_view source_name) {
    toml::table root;
    try {
        root = toml::parse(toml_text, source_name);
    } catch (const toml::parse_error& error) {
        return file_error(source_name, fmt::format("invalid TOML: {} (line {}, column {})", error.description(),
                                                   error.source().begin.line, error.source().begin.column));
    }
    auto state = std::make_shared<State>();
    for (const auto& [key, node] : root) {
        const auto command = parse_gpu_command(key.str());
        if (!command) {
            return file_error(source_name, fmt::format("unknown table '{}' (line {}); valid tables: {}", key.str(),
                                                       node.source().begin.line, valid_tables()));
        }
        const auto* table = node.as_table();
        if (table == nullptr) {
            return file_error(source_name, fmt::format("'{}' (line {}) must be a table with a commands array",
                                                       key.str(), node.source().begin.line));
        }
        auto parsed = parse_override_table(*command, *table, source_name);
        if (!parsed) return parsed.error();
        state->tables[static_cast<std::size_t>(*command)] = std::move(parsed).value();
    }
    return CommandOverrides(std::move(state));
}

bool CommandOverrides::has(GpuCommand command) const { return state_->table(command).has_value(); }

bool CommandOverrides::empty() const {
    for (const auto& table : state_->tables) {
        if (table) return false;
    }
    return true;
}

std::vector<GpuCommand> CommandOverrides::overridden() const {
    std::vector<GpuCommand> commands;
    for (const auto command : kAllGpuCommands) {
        if (has(command)) commands.push_back(command);
    }
    return commands;
}

const std::vector<std::string>& CommandOverrides::warnings() const { return state_->warnings; }

Status CommandOverrides::run(GpuCommand command, const CommandArguments& arguments) const {
    const auto& table = state_->table(command);
    if (!table) {
        return Error{ErrorCode::NotFound, fmt::format("{} is not overridden", to_string(command)),
                     "check has() before run()"};
    }
    // Substitute every command first: a missing argument must fail before
    // the first command changed anything.
    std::vector<std::vector<std::string>> argvs;
    argvs.reserve(table->commands.size());
    for (const auto& words : table->commands) {
        auto& argv = argvs.emplace_back();
        for (const auto& word : words) {
            auto substituted = substitute_placeholders(word, arguments);
            if (!substituted) {
                return Error{ErrorCode::InvalidArgument,
                             fmt::format("{} override: {}", to_string(command), substituted.error().message), {}};
            }
            argv.push_back(std::move(substituted).value());
        }
    }
    for (const auto& argv : argvs) {
        if (auto status = run_one(argv, *table); !status) return status;
    }
    return {};
}

}  // namespace zeus::zeusd
