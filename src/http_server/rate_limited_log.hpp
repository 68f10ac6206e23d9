// A warning that may repeat thousands of times a second (accept failing
// while descriptors run out, one peer hammering its cap, a request that keeps
// failing) is written at most once per interval, with the count of the ones
// left out. Used by the server itself and by routers that log request errors.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "http_server/log_sink.hpp"

namespace zeus::http_server {

class RateLimitedWarning {
  public:
    // Returns the number suppressed since the last one written when this one
    // should be written, nullopt when it should be left out.
    std::optional<std::size_t> admit() {
        const std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (last_ && now - *last_ < kInterval) {
            ++suppressed_;
            return std::nullopt;
        }
        last_ = now;
        return std::exchange(suppressed_, 0);
    }

    // Writes `message` to `log` at `level` when admit() lets it through.
    void write(const LogSink& log, LogLevel level, const std::string& message) {
        const auto suppressed = admit();
        if (!suppressed || !log) return;
        log(level, *suppressed == 0 ? message
                                    : fmt::format("{} ({} more like this in the last 10 s)", message, *suppressed));
    }

  private:
    static constexpr std::chrono::seconds kInterval{10};
    std::mutex mutex_;
    std::optional<std::chrono::steady_clock::time_point> last_;
    std::size_t suppressed_ = 0;
};

}  // namespace zeus::http_server
