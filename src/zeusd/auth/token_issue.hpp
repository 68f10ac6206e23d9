// `zeusd token issue`: prints an HS256 JWT for a user (the CLI wiring lives in
// apps/zeusd; this is the whole of its logic).
//
//   zeusd token issue --signing-key-path P --user U --scope gpu-read,cpu-read --expires 7d
//
//   --signing-key-path P  the daemon's key file (raw bytes, non-empty), the
//                         same file `zeusd serve --signing-key-path` loads
//   --user U              the token's "sub": who holds it, shown in logs and
//                         in 403 messages; must not be empty
//   --scope LIST          comma list of API groups the token grants:
//                         gpu-control, gpu-read, cpu-read
//   --expires D           lifetime in humantime syntax (7d, 12h, 30m, 90s,
//                         "1h 30m", 2weeks; see duration.hpp), or never / 0
//                         for a token without "exp"
#pragma once

#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"
#include "zeusd/auth/jwt.hpp"

namespace zeus::zeusd {

// The token, "exp" = now + lifetime. Scopes keep their command-line order;
// a repeated scope is listed once. Every error names the flag at fault and
// how to fix it.
[[nodiscard]] Result<std::string> issue_token(const std::string& key_path, std::string_view user,
                                              std::string_view scopes, std::string_view expires, UnixSeconds now);

}  // namespace zeus::zeusd
