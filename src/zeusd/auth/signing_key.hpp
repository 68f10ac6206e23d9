// The HMAC-SHA256 signing key of `--signing-key-path`: the file's raw bytes,
// taken as they are (no trimming, no decoding), as the original daemon does,
// so a key file works unchanged with either daemon.
#pragma once

#include <string>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

// The key bytes. An empty file is an InvalidConfig (an empty HMAC key would
// let anyone forge tokens); a file that cannot be read is a NotFound or
// NoPermission naming the path and the OS reason. Both hints say how to fix it.
[[nodiscard]] Result<std::string> load_signing_key(const std::string& path);

}  // namespace zeus::zeusd
