// The loop of a measurement that runs until told to stop: one energy window
// from now until a stop request (a signal, in the CLI) or a duration, with an
// optional callback every period (a power reading). The waiting is the
// caller's, so the CLI can wake on signals and other callers on what they
// like; everything else (begin, ticks that never burst after a stall, end)
// is here, shared by `zeus power`, `zeus energy` and `zeus run`.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus {

// Waits up to `timeout` (not at all for zero); true when asked to stop.
using StopWait = std::function<bool(std::chrono::nanoseconds timeout)>;

struct SamplingLoopOptions {
    std::optional<std::chrono::nanoseconds> period;    // on_tick every period (nullopt: never)
    std::optional<std::chrono::nanoseconds> duration;  // stop this long after the start (nullopt: only on request)
};

// Calls on_tick(now) at start + k·period until a stop request or the
// duration is over. A tick that comes late (the process was suspended)
// moves the next one a period on, so ticks never burst.
void run_sampling_loop(Timestamp start, const SamplingLoopOptions& options, const StopWait& wait_for_stop,
                       const std::function<void(Timestamp)>& on_tick = {});

// The seconds of a command-line option as a duration.
[[nodiscard]] std::chrono::nanoseconds seconds_to_duration(double seconds);

struct WindowRun {
    Timestamp start;  // the window's edges, by the monitor clock
    Timestamp end;
    Result<Measurement> measurement;
};

// One window named `name` over a sampling loop: takes the start, begins the
// window (without sync: nothing runs on the GPUs for us), calls on_begun,
// runs the loop, takes the end and ends the window. An error beginning the
// window comes back as the measurement's error, without a loop.
[[nodiscard]] WindowRun measure_window(EnergyMonitor& monitor, const std::string& name,
                                       const SamplingLoopOptions& options, const StopWait& wait_for_stop,
                                       const std::function<void(Timestamp)>& on_begun = {},
                                       const std::function<void(Timestamp)>& on_tick = {});

}  // namespace zeus
