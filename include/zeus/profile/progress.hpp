// Progress of a profiling call, for logs and progress bars. The profiler
// calls ProfileContext::progress (on rank 0 only) after calibration, at the
// start of each phase and after each trial.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace zeus::profile {

struct ProgressEvent {
    // What just happened, in the original's log wording: "Calibrated
    // iteration duration: 12.345 ms", "Running 2 warmup trial(s)",
    // "Starting cooldown_duration=3.0 s  [10 trials]", "Trial 3/10 done".
    std::string message;
    std::size_t trials_done = 0;   // trials finished in this call, warm-up trials included
    std::size_t trials_total = 0;  // trials this call will run
    double elapsed_s = 0.0;        // since the call started
    // Estimated time left: the planned duration of the remaining trials
    // (cool-down + iterations x calibrated iteration time), scaled by how
    // the finished trials compared with their plan.
    double remaining_s = 0.0;
};

using ProgressFunction = std::function<void(const ProgressEvent&)>;

}  // namespace zeus::profile
