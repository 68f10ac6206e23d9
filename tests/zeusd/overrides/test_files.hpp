// Temporary directories, files and scripts for the override tests.
#pragma once

#include <sys/types.h>

#include <string>

#include "zeusd/overrides/command_overrides.hpp"

namespace zeus::zeusd::testing {

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

// Writes `contents` to `path` with exactly `mode` (umask bypassed); the file is
// closed before this returns, so it can be exec'd at once (no ETXTBSY).
void write_file(const std::string& path, const std::string& contents, mode_t mode = 0644);
[[nodiscard]] std::string read_file(const std::string& path);
[[nodiscard]] bool file_exists(const std::string& path);

// A /bin/sh script `name` in `dir` with `body`; returns its path.
std::string write_script(const TempDir& dir, const std::string& name, const std::string& body);

// Writes `toml` to overrides.toml in `dir` and loads it as the current euid.
[[nodiscard]] Result<CommandOverrides> load_text(const TempDir& dir, const std::string& toml);

// True when `pid` no longer runs: gone, or a zombie nobody reaped yet (a
// container's init may not reap adopted orphans).
[[nodiscard]] bool process_gone(pid_t pid);

}  // namespace zeus::zeusd::testing
