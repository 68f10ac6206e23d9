// One running zeusd: devices opened, server listening, worker threads
// running. Start-up follows the original's order (overrides, GPU backend,
// privileges, signing key, devices, listener) and refuses to start with an
// error that names the flag or device at fault. Stopping puts back every
// GPU setting a client changed and did not ask to keep.
#pragma once

#include <memory>

#include "zeus/platform/error.hpp"
#include "zeusd/serve_config.hpp"

namespace zeus::zeusd {

class Daemon {
  public:
    static Result<std::unique_ptr<Daemon>> start(const ServeConfig& config);
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // Blocks until a stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT), then stops.
    void run_until_signal();
    void stop();

  private:
    struct Parts;
    explicit Daemon(std::unique_ptr<Parts> parts);
    std::unique_ptr<Parts> parts_;
};

}  // namespace zeus::zeusd
