// Storage and arithmetic shared by PowerMonitor and TemperatureMonitor: one
// time-ordered series of samples per GPU (and domain), repeated values stored
// once, optionally bounded (oldest dropped first), and the step-function
// ("held until the next sample") queries over it.
//
// Header-only and templated on the allocator so the benchmark can count the
// bytes the container really allocates per stored sample.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "zeus/monitor/power_monitor.hpp"

namespace zeus::monitor_detail {

// A std::deque keeps samples in fixed blocks (512 bytes in libstdc++, i.e. 32
// PowerSamples) plus one map pointer per block: about sizeof(Sample) + 0.25
// bytes per sample, no doubling slack, and O(1) removal of the oldest sample
// for the bounded mode. It is random access, so lookups by time are binary
// searches.
template <class Sample, class Alloc = std::allocator<Sample>>
class SampleSeries {
  public:
    explicit SampleSeries(std::size_t max_samples = 0, const Alloc& alloc = Alloc())
        : samples_(alloc), max_samples_(max_samples) {}

    // Appends a sample (times must not decrease); drops the oldest one when
    // the bound is reached.
    void push(const Sample& sample) {
        if (max_samples_ != 0 && samples_.size() >= max_samples_) samples_.pop_front();
        samples_.push_back(sample);
    }

    [[nodiscard]] bool empty() const { return samples_.empty(); }
    [[nodiscard]] std::size_t size() const { return samples_.size(); }
    [[nodiscard]] const Sample& front() const { return samples_.front(); }
    [[nodiscard]] const Sample& back() const { return samples_.back(); }
    [[nodiscard]] const Sample& operator[](std::size_t i) const { return samples_[i]; }

    // Samples with start <= time <= end.
    [[nodiscard]] std::vector<Sample> range(std::optional<Timestamp> start, std::optional<Timestamp> end) const {
        auto first = samples_.begin();
        auto last = samples_.end();
        if (start) first = std::lower_bound(first, last, *start, [](const Sample& s, Timestamp t) { return s.time < t; });
        if (end) last = std::upper_bound(first, last, *end, [](Timestamp t, const Sample& s) { return t < s.time; });
        return std::vector<Sample>(first, last);
    }

    // Index of the sample in force at `at` (the last one with time <= at);
    // nullopt when `at` is before the first sample.
    [[nodiscard]] std::optional<std::size_t> in_force(Timestamp at) const {
        auto it = std::upper_bound(samples_.begin(), samples_.end(), at,
                                   [](Timestamp t, const Sample& s) { return t < s.time; });
        if (it == samples_.begin()) return std::nullopt;
        return static_cast<std::size_t>(std::distance(samples_.begin(), it) - 1);
    }

    // Integral over [start, end] of the step function each sample's value
    // holds until the next sample (the last one until `end`), with `value`
    // extracting the quantity. Precondition: front().time <= start <= end.
    template <class Value>
    [[nodiscard]] double integrate(Timestamp start, Timestamp end, Value value) const {
        using Seconds = std::chrono::duration<double>;
        auto i = in_force(start).value_or(0);
        double total = 0;
        Timestamp t = start;
        while (t < end) {
            const Timestamp next = i + 1 < samples_.size() ? samples_[i + 1].time : end;
            const Timestamp segment_end = std::min(next, end);
            total += value(samples_[i]) * Seconds(segment_end - t).count();
            t = segment_end;
            ++i;
        }
        return total;
    }

  private:
    std::deque<Sample, Alloc> samples_;
    std::size_t max_samples_;
};

}  // namespace zeus::monitor_detail
