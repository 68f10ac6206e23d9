// Reading the override file only if no other user could have written it. The
// file decides which commands a privileged daemon runs (often through
// passwordless sudo rules), so a file others can edit is a privilege
// escalation.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

struct TrustedFile {
    std::string contents;
    std::vector<std::string> warnings;  // e.g. group-writable; for the caller to log
};

// Rules (the original's): the owner must be root or `daemon_euid`; a
// world-writable file is refused; a group-writable one is accepted with a
// warning. Symbolic links are followed and the target is what is checked;
// the checks and the read use one open descriptor, so the file cannot be
// swapped in between. Errors: NotFound, NoPermission (cannot open),
// InvalidConfig (untrusted, not a regular file, too large), OperatingSystem.
[[nodiscard]] Result<TrustedFile> read_trusted_file(const std::string& path, uid_t daemon_euid);

}  // namespace zeus::zeusd
