// The simulator's clocks. Simulated time runs on CLOCK_MONOTONIC, as a real
// GPU's counters do: a wall-clock step (NTP, an operator, libfaketime) must
// neither add an hour of energy in an instant nor freeze the counters. The
// wall clock (CLOCK_REALTIME) only dates readings (NVML timestamps).
#pragma once

#include <time.h>

#include <cstdint>

namespace zeus::sim {

std::int64_t monotonic_now_ns();
std::int64_t unix_now_us();  // µs: nanoseconds since 1970 overflow in 2262
// The wall clock less the monotonic one (µs): what dates a monotonic time.
// Steady within a process while the wall clock is (it follows a step of more
// than a millisecond): two reads of one refresh must give one date, which
// reading both clocks each time would not when preempted between the reads.
std::int64_t wall_offset_us();
// This boot's id (/proc/sys/kernel/random/boot_id), "" where unreadable:
// CLOCK_MONOTONIC readings compare only within one boot.
const char* boot_id();

// Tests: every clock read goes through `source` (clock_gettime's signature),
// so a test can step one clock and see which one the simulator follows.
// nullptr restores clock_gettime. Not thread-safe: set it before use.
using ClockSource = int (*)(clockid_t, timespec*);
void set_clock_source_for_testing(ClockSource source);

}  // namespace zeus::sim
