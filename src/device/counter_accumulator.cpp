#include "zeus/device/counter_accumulator.hpp"

#include <algorithm>
#include <cmath>

namespace zeus {
namespace {

// Reads are timed by the caller, not the hardware: allow this much jitter on
// top of the interval between them, and a few counts of quantisation.
constexpr std::chrono::milliseconds kTimingSlack{20};
constexpr double kPowerMargin = 1.5;
constexpr double kCountSlack = 4.0;

}  // namespace

std::string_view to_string(CounterEvent event) {
    switch (event) {
        case CounterEvent::Normal: return "normal";
        case CounterEvent::First: return "first";
        case CounterEvent::Wrap: return "wrap";
        case CounterEvent::Reset: return "reset";
        case CounterEvent::BackwardGlitch: return "backward glitch";
        case CounterEvent::JumpGlitch: return "jump glitch";
        case CounterEvent::LateRead: return "late read";
    }
    return "normal";
}

CounterAccumulator::CounterAccumulator(CounterSpec spec) : spec_(std::move(spec)) {}

double CounterAccumulator::plausible_counts(Clock::duration dt) const {
    const double seconds = std::chrono::duration<double>(dt + kTimingSlack).count();
    return spec_.max_power.count() * kPowerMargin * seconds / spec_.joules_per_count + kCountSlack;
}

std::optional<CounterAccumulator::Clock::duration> CounterAccumulator::max_read_interval() const {
    if (spec_.range == 0 || spec_.max_power.count() <= 0) return std::nullopt;
    const double wrap_seconds = static_cast<double>(spec_.range) * spec_.joules_per_count / spec_.max_power.count();
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wrap_seconds / 2.0));
}

CounterEvent CounterAccumulator::update(std::uint64_t raw, Clock::time_point when) {
    std::lock_guard lock(mutex_);
    ++stats_.samples;
    if (spec_.range != 0) raw %= spec_.range;  // hardware may set bits above the counter's width
    if (!last_raw_) {
        first_raw_ = raw;
        last_raw_ = raw;
        last_time_ = when;
        return CounterEvent::First;
    }
    const std::uint64_t last = *last_raw_;
    const auto dt = std::max(when - last_time_, Clock::duration::zero());
    const double plausible = plausible_counts(dt);
    const bool late = spec_.range != 0 && max_read_interval() && dt > 2 * *max_read_interval();

    auto accept = [&](std::uint64_t delta, CounterEvent event) {
        total_ += delta;
        last_raw_ = raw;
        last_time_ = when;
        last_was_backward_ = false;
        return event;
    };

    const bool bounded = spec_.max_power.count() > 0;
    if (raw >= last) {
        const std::uint64_t delta = raw - last;
        if (bounded && static_cast<double>(delta) > plausible) {
            // Impossible power: do not count it, and measure from here on.
            ++stats_.jump_glitches;
            last_raw_ = raw;
            last_time_ = when;
            last_was_backward_ = false;
            return CounterEvent::JumpGlitch;
        }
        if (late) {
            ++stats_.late_reads;
            return accept(delta, CounterEvent::LateRead);
        }
        return accept(delta, CounterEvent::Normal);
    }

    // raw < last: a wrap, a reset, or a glitch.
    if (spec_.range != 0) {
        const std::uint64_t wrapped = spec_.range - last + raw;
        if (static_cast<double>(wrapped) <= plausible) {
            ++stats_.wraps;
            if (late) ++stats_.late_reads;
            return accept(wrapped, late ? CounterEvent::LateRead : CounterEvent::Wrap);
        }
    }
    if (spec_.range == 0 || !bounded) {
        // A counter that never wraps restarted (driver reload) and has
        // counted `raw` since; the energy before the restart is unknown.
        ++stats_.resets;
        return accept(raw, CounterEvent::Reset);
    }
    if (static_cast<double>(raw) <= plausible || last_was_backward_) {
        // The counter restarted (driver reload) and has counted `raw` since;
        // what happened between the last read and the restart is unknown.
        // A second backward reading in a row also means a new baseline.
        ++stats_.resets;
        const std::uint64_t since_restart = static_cast<double>(raw) <= plausible ? raw : 0;
        return accept(since_restart, CounterEvent::Reset);
    }
    // A lone step backwards: keep the old baseline and wait for the counter
    // to pass it again.
    ++stats_.backward_glitches;
    last_was_backward_ = true;
    return CounterEvent::BackwardGlitch;
}

Joules CounterAccumulator::total() const {
    std::lock_guard lock(mutex_);
    return Joules(static_cast<double>(total_) * spec_.joules_per_count);
}

std::uint64_t CounterAccumulator::total_counts() const {
    std::lock_guard lock(mutex_);
    return total_;
}

std::optional<std::uint64_t> CounterAccumulator::first_raw() const {
    std::lock_guard lock(mutex_);
    return first_raw_;
}

CounterStats CounterAccumulator::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace zeus
