// Internal: turns the profiler's steps into ProgressEvents with an ETA.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "zeus/profile/profile.hpp"

namespace zeus::profile {

class ProgressTracker {
  public:
    // Reports through ctx.progress, on rank 0 only; silent otherwise.
    explicit ProgressTracker(const ProfileContext& ctx);

    // Adds `trials` trials of `seconds_each` planned seconds to the total.
    void plan(std::size_t trials, double seconds_each);
    // A log line that finishes no trial.
    void note(std::string message);
    // A trial finished; it was planned to take `planned_s`.
    void trial_done(double planned_s, std::string message);

  private:
    void emit(std::string message);

    ProgressFunction report_;
    std::chrono::steady_clock::time_point start_;
    std::size_t trials_done_ = 0;
    std::size_t trials_total_ = 0;
    double planned_done_s_ = 0.0;
    double planned_total_s_ = 0.0;
};

// Planned wall time of one trial.
[[nodiscard]] double planned_trial_seconds(double cooldown, double measurement, std::size_t warmup_iterations,
                                           double iteration_duration);

}  // namespace zeus::profile
