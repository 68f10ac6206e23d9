// Power samples to energy by the trapezoid rule on a monotonic clock.
//
// Why not CounterAccumulator alone: it turns a hardware *energy* counter into
// a total, but an INA3221 only reports power, so something must integrate
// first. The integrated total is then fed to an AccumulatedCounter as a
// monotonic µJ counter, which gives the rails CounterSampler's owned thread
// and its filter for readings implying absurd power. Reads may run
// concurrently: samples are added under the rail's lock, an older one after a
// newer one is ignored, and so is its total in the counter.
//
// Error bound: the trapezoid is exact for power that is constant or linear
// between two samples. A step of size dP between samples t_k and t_k+1 is
// misattributed by at most |dP| x (t_k+1 - t_k) / 2, so the error of any
// window is at most the sum over steps of |dP| x longest_gap / 2.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "zeus/platform/units.hpp"

namespace zeus::soc {

class PowerIntegrator {
  public:
    using Clock = std::chrono::steady_clock;

    // Adds a sample (in time order; one earlier than the last is ignored) and
    // returns the energy since the first sample. Negative power (the sensor's
    // offset near zero current) counts as 0 W, so the total never decreases.
    Joules add(Watts power, Clock::time_point when);

    [[nodiscard]] Joules total() const { return total_; }
    [[nodiscard]] std::optional<Watts> last_power() const { return last_power_; }
    [[nodiscard]] std::uint64_t samples() const { return samples_; }
    [[nodiscard]] std::uint64_t negative_readings() const { return negative_; }
    [[nodiscard]] Clock::duration longest_gap() const { return longest_gap_; }

  private:
    Joules total_{0};
    std::optional<Watts> last_power_;
    Clock::time_point last_time_{};
    std::uint64_t samples_ = 0;
    std::uint64_t negative_ = 0;
    Clock::duration longest_gap_{0};
};

}  // namespace zeus::soc
