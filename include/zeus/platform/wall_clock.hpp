// The wall clock as microseconds since the Unix epoch, for the times a user
// reads (a window's start, a power row's timestamp). libstdc++'s
// std::chrono::system_clock counts int64 nanoseconds and overflows in April
// 2262 (a clock set past it read as 1715); int64 microseconds last 292,000
// years either way.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace zeus {

struct WallClock {
    using rep = std::int64_t;
    using period = std::micro;
    using duration = std::chrono::microseconds;
    using time_point = std::chrono::time_point<WallClock>;
    static constexpr bool is_steady = false;

    // CLOCK_REALTIME, read without going through nanoseconds in an int64.
    static time_point now() noexcept {
        timespec now{};
        ::clock_gettime(CLOCK_REALTIME, &now);
        return time_point(std::chrono::seconds(now.tv_sec) + std::chrono::microseconds(now.tv_nsec / 1000));
    }

    // A system_clock time (never past 2262) as a WallClock one.
    static time_point from_system(std::chrono::system_clock::time_point t) noexcept {
        return time_point(std::chrono::duration_cast<duration>(t.time_since_epoch()));
    }
};

using WallTime = WallClock::time_point;

// Seconds since the Unix epoch, as Python's time.time() gives them.
[[nodiscard]] inline double unix_seconds(WallTime t) noexcept {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace zeus
