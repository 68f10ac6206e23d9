// GPU command overrides (the original's --gpu-command-overrides): an operator
// replaces a GPU control command, e.g. set_power_limit, with a list of
// commands the daemon runs, for GPUs controlled through a vendor tool. Reads
// are never overridden. Format and rules: docs/zeusd-overrides.md.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeusd/overrides/gpu_command.hpp"

namespace zeus::zeusd {

// Immutable once loaded, cheap to copy (shared state), and safe to run() from
// many threads at once, e.g. for different GPUs.
class CommandOverrides {
  public:
    // No overrides.
    CommandOverrides();

    // Checks the file's trust (owner root or `daemon_euid`, not
    // world-writable), parses and validates it. Every error names the file,
    // and for content errors the table, key, command or placeholder at fault
    // (code InvalidConfig; NotFound/NoPermission/OperatingSystem when the
    // file cannot be read). A group-writable file loads with a warning.
    [[nodiscard]] static Result<CommandOverrides> load(const std::string& path, uid_t daemon_euid);
    // The same validation on TOML text, without the file checks.
    // `source_name` stands for the file in messages.
    [[nodiscard]] static Result<CommandOverrides> parse(std::string_view toml_text, std::string_view source_name);

    [[nodiscard]] bool has(GpuCommand command) const;
    // True when no command is overridden (an empty file, or one without
    // tables). The original lets gpu-control run without root only when a
    // non-empty override file is configured.
    [[nodiscard]] bool empty() const;
    // The overridden commands in table order, for the start-up log.
    [[nodiscard]] std::vector<GpuCommand> overridden() const;
    // Warnings found while loading (e.g. a group-writable file), to be logged.
    [[nodiscard]] const std::vector<std::string>& warnings() const;

    // Runs the commands configured for `command` one after another, stopping
    // at the first that fails: spawn error, non-zero exit, death by signal,
    // timeout (the command's whole process group is killed), or output
    // (stdout then stderr) matching error_pattern even after exit 0. The
    // error names the command, what happened and the end of its output.
    // Codes: Timeout for a timeout, OperatingSystem for other failures (both
    // are server-side failures, a 500 in the original), NotFound when
    // `command` is not overridden, InvalidArgument when `arguments` lacks a
    // value a placeholder needs (checked before anything runs).
    [[nodiscard]] Status run(GpuCommand command, const CommandArguments& arguments) const;

  private:
    struct State;
    explicit CommandOverrides(std::shared_ptr<const State> state);

    std::shared_ptr<const State> state_;
};

}  // namespace zeus::zeusd
