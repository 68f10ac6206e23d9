#include "zeus/monitor/sampling_loop.hpp"

#include <algorithm>

namespace zeus {

std::chrono::nanoseconds seconds_to_duration(double seconds) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

void run_sampling_loop(Timestamp start, const SamplingLoopOptions& options, const StopWait& wait_for_stop,
                       const std::function<void(Timestamp)>& on_tick) {
    const Timestamp stop_at = options.duration ? start + *options.duration : Timestamp::max();
    auto next = options.period ? start + *options.period : Timestamp::max();
    // Waits are capped so that a stop request the waiter missed is seen within a second.
    constexpr std::chrono::nanoseconds longest_wait = std::chrono::seconds(1);
    while (true) {
        auto now = MonitorClock::now();
        if (now >= stop_at) return;
        const auto wake = std::min(next, stop_at);
        const auto timeout = wake > now ? std::min<std::chrono::nanoseconds>(wake - now, longest_wait)
                                        : std::chrono::nanoseconds(0);
        if (wait_for_stop(timeout)) return;
        now = MonitorClock::now();
        if (now >= stop_at) return;
        if (!options.period || now < next) continue;
        if (on_tick) on_tick(now);
        next += *options.period;
        if (next <= now) next = now + *options.period;  // fell behind (suspended?): skip, do not burst
    }
}

WindowRun measure_window(EnergyMonitor& monitor, const std::string& name, const SamplingLoopOptions& options,
                         const StopWait& wait_for_stop, const std::function<void(Timestamp)>& on_begun,
                         const std::function<void(Timestamp)>& on_tick) {
    const auto start = MonitorClock::now();  // the window's edge: a duration counts from here
    if (auto ok = monitor.begin_window(name, false); !ok) return {start, start, ok.error()};
    if (on_begun) on_begun(start);
    run_sampling_loop(start, options, wait_for_stop, on_tick);
    const auto end = MonitorClock::now();  // the window's edge (end_window may then wait for the counters)
    return {start, end, monitor.end_window(name, false)};
}

}  // namespace zeus
