// Getting a Unix socket path ready the way the original Zeus daemon does: a
// stale socket left by a crash is removed, a live daemon or a path that is
// not a socket is never touched, missing parent directories are created.
// After binding, the socket gets the configured mode and owner.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "http_server/log_sink.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::http_server {

// Reports a removed stale socket to `log` (Info).
[[nodiscard]] Status prepare_socket_path(const std::string& path, const LogSink& log = {});

// `mode` as octal digits: octal digits ("666", "0660").
[[nodiscard]] Result<mode_t> parse_socket_mode(const std::string& text);

[[nodiscard]] Status set_socket_access(const std::string& path, mode_t mode, std::optional<uid_t> uid,
                                       std::optional<gid_t> gid);

}  // namespace zeus::http_server
