// {name} placeholders inside the words of an override command. Checked once
// when the file loads so that a typo is a start-up error, not a failed GPU
// command at 3 a.m.; substituted each time the command runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"
#include "zeusd/overrides/gpu_command.hpp"

namespace zeus::zeusd {

// nullopt when every brace in `word` belongs to a {name} that `command`
// allows; otherwise what is wrong with it, e.g. "unknown placeholder
// '{max_clock_mhz}'" or "unbalanced brace". Braces cannot be escaped: the
// original has no syntax for a literal brace either.
[[nodiscard]] std::optional<std::string> check_placeholders(GpuCommand command, std::string_view word);

// `word` with each {name} replaced by its value. InvalidArgument naming the
// placeholder when `arguments` lacks its value.
// Precondition: check_placeholders(command, word) found nothing wrong.
[[nodiscard]] Result<std::string> substitute_placeholders(std::string_view word,
                                                          const CommandArguments& arguments);

}  // namespace zeus::zeusd
