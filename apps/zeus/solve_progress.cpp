#include "solve_progress.hpp"

#include <fmt/format.h>

#include "profile_output.hpp"

namespace zeus::cli {

std::string SolveProgress::line(const lowtime::FrontierPoint& point, int start, int min, double unit_time,
                                double elapsed_s) {
    const int span = start - min;
    const double done = span > 0 ? static_cast<double>(start - point.quant_time) / span : 1.0;
    const std::string eta = done > 0.0 ? clock_text(elapsed_s / done * (1.0 - done)) : "?";
    return fmt::format("frontier point {}: {:.4f} s (slowest {:.4f} s, fastest {:.4f} s)  {:.0f}%  elapsed {}  ETA {}",
                       point.iteration, point.real_time, start * unit_time, min * unit_time, 100.0 * done,
                       clock_text(elapsed_s), eta);
}

void SolveProgress::attach(lowtime::SolverOptions& options) {
    if (!enabled_) return;
    options.on_start = [this](int start, int min) {
        start_ = start;
        min_ = min;
        started_ = std::chrono::steady_clock::now();
    };
    options.on_point = [this](const lowtime::FrontierPoint& point) {
        last_ = point;
        pending_ = true;
        const auto now = std::chrono::steady_clock::now();
        if (status_.shown() && now - shown_ < std::chrono::milliseconds(200)) return;  // a terminal, not a log
        show(now);
    };
}

void SolveProgress::show(std::chrono::steady_clock::time_point now) {
    shown_ = now;
    pending_ = false;
    const double unit = last_.quant_time > 0 ? last_.real_time / last_.quant_time : 0.0;
    status_.show(line(last_, start_, min_, unit, std::chrono::duration<double>(now - started_).count()));
}

void SolveProgress::finish() {
    if (pending_) show(std::chrono::steady_clock::now());  // the last point, not the last one shown
    status_.finish();
}

}  // namespace zeus::cli
