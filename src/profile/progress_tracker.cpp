#include "progress_tracker.hpp"

#include <algorithm>
#include <cmath>

namespace zeus::profile {

ProgressTracker::ProgressTracker(const ProfileContext& ctx)
    : start_(std::chrono::steady_clock::now()) {
    const bool rank_zero = ctx.communicator == nullptr || ctx.communicator->rank() == 0;
    if (rank_zero) report_ = ctx.progress;
}

void ProgressTracker::plan(std::size_t trials, double seconds_each) {
    trials_total_ += trials;
    planned_total_s_ += static_cast<double>(trials) * seconds_each;
}

void ProgressTracker::note(std::string message) { emit(std::move(message)); }

void ProgressTracker::trial_done(double planned_s, std::string message) {
    ++trials_done_;
    planned_done_s_ += planned_s;
    emit(std::move(message));
}

void ProgressTracker::emit(std::string message) {
    if (!report_) return;
    ProgressEvent e;
    e.message = std::move(message);
    e.trials_done = trials_done_;
    e.trials_total = trials_total_;
    e.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double planned_left = std::max(0.0, planned_total_s_ - planned_done_s_);
    // Scale the plan by how the finished trials went (scheduling, a slower
    // command than calibrated); before any trial, the plan itself.
    const double pace = planned_done_s_ > 0.0 ? e.elapsed_s / planned_done_s_ : 1.0;
    e.remaining_s = planned_left * (std::isfinite(pace) ? pace : 1.0);
    // The planned seconds are summed in a different order than they are
    // subtracted, so a finished plan can leave a rounding residue: done is done.
    if (trials_total_ > 0 && trials_done_ >= trials_total_) e.remaining_s = 0.0;
    report_(e);
}

double planned_trial_seconds(double cooldown, double measurement, std::size_t warmup_iterations,
                             double iteration_duration) {
    const double iterations = std::max(1.0, std::floor(measurement / iteration_duration));
    return std::max(0.0, cooldown) + (static_cast<double>(warmup_iterations) + iterations) * iteration_duration;
}

}  // namespace zeus::profile
