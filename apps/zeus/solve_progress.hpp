// `zeus perseus solve`'s progress line on stderr: the frontier walks from the
// slowest makespan to the fastest one quantum per point, so the share of
// quanta left gives the fraction done and, at the pace so far, an ETA.
#pragma once

#include <chrono>
#include <string>

#include "status_line.hpp"
#include "zeus/lowtime/solver.hpp"

namespace zeus::cli {

class SolveProgress {
public:
    explicit SolveProgress(bool enabled) : enabled_(enabled) {}
    ~SolveProgress() { finish(); }
    SolveProgress(const SolveProgress&) = delete;
    SolveProgress& operator=(const SolveProgress&) = delete;

    // Installs the callbacks (nothing when disabled).
    void attach(lowtime::SolverOptions& options);
    // Ends the line so that the summary starts on its own.
    void finish();

    // "frontier point 812: 1.9120 s (slowest 2.2430 s, fastest 1.4220 s)  40%  elapsed 0:12  ETA 0:18"
    [[nodiscard]] static std::string line(const lowtime::FrontierPoint& point, int start, int min, double unit_time,
                                          double elapsed_s);

private:
    void show(std::chrono::steady_clock::time_point now);

    bool enabled_;
    bool pending_ = false;
    lowtime::FrontierPoint last_{};
    StatusLine status_;
    int start_ = 0, min_ = 0;
    std::chrono::steady_clock::time_point started_{}, shown_{};
};

}  // namespace zeus::cli
