// Turning a child's raw output into text fit for an error message: the error
// ends up in JSON responses and logs, which need valid UTF-8 and no megabytes.
#pragma once

#include <string>
#include <string_view>

namespace zeus::zeusd {

// The last `max_bytes` of `output` (whole characters, prefixed with "..." when
// cut), trailing blank lines removed, as valid UTF-8 (zeus::to_utf8); "<empty>" for nothing.
[[nodiscard]] std::string output_tail(std::string_view output, std::size_t max_bytes);

}  // namespace zeus::zeusd
