// Reading small sysfs/procfs files with errno kept, so a permission problem
// is told apart from a missing file or a malformed value. Never returns a
// default for a file that could not be read.
#pragma once

#include <cstdint>
#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::rapl {

// The whole file (sysfs attributes are one page at most), or an Error whose
// message names the file and whose code says why: NoPermission, NotFound,
// OperatingSystem (with errno in vendor_code).
[[nodiscard]] Result<std::string> read_text_file(const std::string& path);

// The file's content without surrounding whitespace.
[[nodiscard]] Result<std::string> read_trimmed(const std::string& path);

// A file holding one unsigned decimal number (energy_uj, max_energy_range_uj...).
// Anything else is InvalidState naming the file and what it held.
[[nodiscard]] Result<std::uint64_t> read_u64_file(const std::string& path);

// A file holding one signed decimal number (topology ids may be -1).
[[nodiscard]] Result<std::int64_t> read_i64_file(const std::string& path);

// How to make RAPL readable without running the program as root.
[[nodiscard]] std::string permission_fixes();

}  // namespace zeus::rapl
