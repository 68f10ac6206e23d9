// Option checks with zeus's wording and exit codes instead of CLI11's: every
// rejected option is reported as "zeus: COMMAND: PROBLEM" plus the fix, and
// exits with 2 (125 for `zeus run`, whose own codes are the command's).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace zeus::cli {

// A finite number in [min, max] (NaN and infinities are rejected: CLI11's
// Range lets NaN through, since every comparison with it is false).
[[nodiscard]] CLI::Validator finite_number(double min, double max, std::string unit);

// A whole number in [min, max].
[[nodiscard]] CLI::Validator whole_number(long long min, long long max);

// One of `choices`, named in the error.
[[nodiscard]] CLI::Validator one_of(std::vector<std::string> choices);

// Prints a parse error the zeus way and returns the exit code: 0 for --help
// and --version, 2 for bad options (125 under `zeus run`).
int report_parse_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace zeus::cli
