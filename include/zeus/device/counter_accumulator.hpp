// One component turns every raw hardware energy counter (RAPL's 32-bit µJ,
// AMD SMI's accumulator, NVML's mJ) into a monotonic 64-bit total. It detects
// wraparounds (several per window are exact as long as the counter is read at
// least once per wrap period; CounterSampler guarantees that), resets (driver
// reload: the counter restarts near zero) and glitches (backward steps, jumps
// implying impossible power), corrects what can be corrected, flags the rest,
// and counts each kind.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

struct CounterSpec {
    std::string name;          // for messages, e.g. "RAPL package-0 (intel-rapl:0)"
    // The counter wraps to 0 when it reaches this value. 0 = never wraps (a
    // 64-bit counter): then any decrease is a restart, never a glitch.
    std::uint64_t range = 0;
    double joules_per_count = 1e-6;
    // Conservative bound: a delta implying more power than this is a glitch.
    // 0 disables the check (for counters whose readings are not tied to this
    // process's clock, such as the GPU simulator's virtual time).
    Watts max_power{1000.0};
};

struct CounterStats {
    std::uint64_t samples = 0;
    std::uint64_t wraps = 0;             // corrected exactly
    std::uint64_t resets = 0;            // counter restarted; energy between the two reads is partly unknown
    std::uint64_t backward_glitches = 0; // a reading below the last one that was not a wrap or reset: ignored
    std::uint64_t jump_glitches = 0;     // a forward jump implying impossible power: ignored
    std::uint64_t late_reads = 0;        // reads further apart than one wrap period: wraps may have been missed

    // True when every delta so far was exact (no resets, glitches or late reads).
    [[nodiscard]] bool exact() const { return resets == 0 && backward_glitches == 0 && jump_glitches == 0 && late_reads == 0; }
};

enum class CounterEvent { Normal, First, Wrap, Reset, BackwardGlitch, JumpGlitch, LateRead };
[[nodiscard]] std::string_view to_string(CounterEvent event);

class CounterAccumulator {
  public:
    using Clock = std::chrono::steady_clock;

    explicit CounterAccumulator(CounterSpec spec);

    // Feeds one raw reading taken at `when` (readings must be fed in time
    // order) and says how it was interpreted. Thread-safe.
    CounterEvent update(std::uint64_t raw, Clock::time_point when);

    // Accumulated energy since the first reading.
    [[nodiscard]] Joules total() const;
    [[nodiscard]] std::uint64_t total_counts() const;
    // The first reading fed (masked to the range): where the total starts.
    [[nodiscard]] std::optional<std::uint64_t> first_raw() const;
    [[nodiscard]] CounterStats stats() const;
    [[nodiscard]] const CounterSpec& spec() const { return spec_; }

    // The longest gap between reads that still sees every wrap, with a safety
    // factor of 2: half of range / max_power. Unbounded counters: nullopt.
    [[nodiscard]] std::optional<Clock::duration> max_read_interval() const;

  private:
    // Counts the counter may plausibly advance in `dt`, with margin for timing jitter.
    [[nodiscard]] double plausible_counts(Clock::duration dt) const;

    CounterSpec spec_;
    mutable std::mutex mutex_;
    std::optional<std::uint64_t> first_raw_;
    std::optional<std::uint64_t> last_raw_;
    Clock::time_point last_time_{};
    bool last_was_backward_ = false;
    std::uint64_t total_ = 0;
    CounterStats stats_;
};

}  // namespace zeus
