// Reading one sysfs attribute. The kernel regenerates an attribute on every
// read from offset 0, so each read opens the file afresh; every failure names
// the file, says what went wrong and how to fix it.
#pragma once

#include <filesystem>
#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::soc {

// The file's content without surrounding whitespace.
[[nodiscard]] Result<std::string> read_sysfs_text(const std::filesystem::path& path);

// The file's content as a number (sysfs writes integers; a decimal point is
// tolerated). Empty, non-numeric or non-finite content is an error.
[[nodiscard]] Result<double> read_sysfs_number(const std::filesystem::path& path);

}  // namespace zeus::soc
