// The shortest valid durations and what using them costs.
#include "zeus/profile/recommendation.hpp"

#include <cstdio>

namespace zeus::profile {
namespace {

// The valid entry with the smallest swept value (the first one on a tie).
const SweepResult* shortest_valid(const SweepReport& report, bool by_cooldown) {
    const SweepResult* best = nullptr;
    for (const auto& e : report.entries) {
        if (!e.is_valid) continue;
        const double v = by_cooldown ? e.cooldown_duration : e.measurement_duration;
        if (best == nullptr || v < (by_cooldown ? best->cooldown_duration : best->measurement_duration)) best = &e;
    }
    return best;
}

double mean_time_per_iter(const SweepResult& e) {
    if (e.trials.empty()) return 0.0;
    double sum = 0.0;
    for (const auto& t : e.trials) sum += t.time_per_iter;
    return sum / static_cast<double>(e.trials.size());
}

// `timing` is the entry whose trials ran the recommended measurement duration.
Recommendation make(double measurement, double cooldown, const SweepResult& timing, std::size_t warmup_iterations) {
    Recommendation r;
    r.measurement_duration = measurement;
    r.cooldown_duration = cooldown;
    r.window_time = timing.avg_total_time;
    r.warmup_time = static_cast<double>(warmup_iterations) * mean_time_per_iter(timing);
    r.wall_time_per_measurement = cooldown + r.warmup_time + r.window_time;
    return r;
}

}  // namespace

std::string Recommendation::to_string() const {
    const double measured = wall_time_per_measurement > 0 ? 100.0 * window_time / wall_time_per_measurement : 0.0;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "Recommended: measurement_duration=%.1f s, cooldown_duration=%.1f s; one measurement takes %.1f s "
                  "of wall time (%.1f s cool-down + %.1f s warm-up + %.1f s window, %.0f%% of it measured)",
                  measurement_duration, cooldown_duration, wall_time_per_measurement, cooldown_duration, warmup_time,
                  window_time, measured);
    return buf;
}

std::optional<Recommendation> recommend(const SweepReport& measurement, const SweepReport& cooldown,
                                        std::size_t num_warmup_iterations) {
    const SweepResult* m = shortest_valid(measurement, false);
    const SweepResult* c = shortest_valid(cooldown, true);
    if (m == nullptr || c == nullptr) return std::nullopt;
    return make(m->measurement_duration, c->cooldown_duration, *m, num_warmup_iterations);
}

std::optional<Recommendation> recommend(const SweepReport& report, std::size_t num_warmup_iterations) {
    const bool by_cooldown = report.sweep_param.first == "cooldown_duration";
    const SweepResult* e = shortest_valid(report, by_cooldown);
    if (e == nullptr) return std::nullopt;
    return make(e->measurement_duration, e->cooldown_duration, *e, num_warmup_iterations);
}

}  // namespace zeus::profile
