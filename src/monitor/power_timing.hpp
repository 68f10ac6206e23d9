// When a power reading was taken, on the monitor's steady clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

#include "zeus/monitor/power_monitor.hpp"

namespace zeus::monitor_detail {

// A reading that carries the device's refresh time (NVML field values do) is
// placed at that time, converted from the wall clock to the steady clock:
// the sensor changed then, not when we happened to poll it, which removes up
// to one polling period of lag from every step in the timeline. The time is
// kept between the previous successful poll of the same series (the change
// was not visible then) and this poll, and never more than a second old, so
// a wall-clock jump or a backend with odd timestamps cannot disorder the
// series. Without a refresh time, the poll time is used.
[[nodiscard]] inline Timestamp sample_time(Timestamp polled, std::chrono::system_clock::time_point polled_wall,
                                           std::optional<std::chrono::system_clock::time_point> refreshed_at,
                                           std::optional<Timestamp> previous_poll) {
    if (!refreshed_at) return polled;
    const auto age = std::chrono::duration_cast<MonitorClock::duration>(polled_wall - *refreshed_at);
    Timestamp lower = polled - std::chrono::seconds(1);
    if (previous_poll) lower = std::max(lower, *previous_poll);
    return std::clamp(polled - age, std::min(lower, polled), polled);
}

}  // namespace zeus::monitor_detail
