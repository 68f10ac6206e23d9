// Option checks with zeus's wording and exit codes instead of CLI11's: every
// rejected option is reported as "zeus: COMMAND: PROBLEM" plus the fix, and
// exits with 2 (125 for `zeus run`, whose own codes are the command's).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace zeus::cli {

// Every number option of every command is checked by one of these three
// (tests/cli/numeric_options_test.cpp enumerates them from the app): an
// empty value, NaN, an infinity or a value outside the range shown in --help
// is refused while parsing, naming the option. CLI11's own Range lets NaN
// through (every comparison with it is false) and CLI11 reads '' as 0.

// A finite number in [min, max].
[[nodiscard]] CLI::Validator finite_number(double min, double max, std::string unit);

// A finite number in (0, max]: a duration, a rate or a fraction for which 0
// means nothing.
[[nodiscard]] CLI::Validator positive_number(double max, std::string unit);

// A whole number in [min, max].
[[nodiscard]] CLI::Validator whole_number(long long min, long long max);

// One of `choices`, named in the error.
[[nodiscard]] CLI::Validator one_of(std::vector<std::string> choices);

// Text that names something (a Pushgateway job, a label, a zone, a
// currency): refused while parsing when it is not UTF-8, since JSON,
// Prometheus and the Pushgateway only take UTF-8 (zeus/platform/utf8.hpp).
[[nodiscard]] CLI::Validator utf8_name();

// Prints a parse error the zeus way and returns the exit code: 0 for --help
// and --version, 2 for bad options (125 under `zeus run`).
int report_parse_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace zeus::cli
