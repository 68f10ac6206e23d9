// A counter GPU's energy at a window edge and the value of a window from
// its two edges, shared by synchronous and sampled edges: the counter
// interpolated past its last refresh with an error bound, the counter watch's
// compensation for a stuck or restarted counter, and the warnings that say
// what happened to the counter during the window (docs/monitoring.md).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitor/counter_watch.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/monitor/measurement.hpp"

namespace zeus::monitor_detail {

using SystemClock = std::chrono::system_clock;

// NVIDIA boards refresh the energy counter about every 100 ms
// (shared/reference/measurement-facts.md); shorter windows can read 0 J.
inline constexpr std::chrono::milliseconds kCounterUpdatePeriod{100};
// A refresh time further back than this is not trusted for interpolation.
inline constexpr std::chrono::seconds kMaxRefreshAge{1};

// A counter GPU's energy at one window edge, and how far off it can be.
struct EdgeEstimate {
    Joules energy{0.0};
    Joules error_bound{0.0};  // 0 when the counter was not extrapolated
};

// A counter GPU's begin edge, as a window keeps it until its end.
struct CounterEdge {
    Joules energy;
    Joules error_bound;  // of the begin edge's estimate
    std::optional<CounterStats> stats;
    CounterWatch::GpuView watched;
    std::optional<std::string> lost;  // sampled edges: why the GPU's sample at the begin edge failed
};

// The GPUs measured by their energy counter, fixed when the monitor opens;
// shared with deferred results, which may outlive the monitor.
struct CounterGpus {
    std::vector<unsigned> indices;
    std::vector<Watts> ceilings;  // positions follow `indices`: the highest power limit, 0 W if unknown
};

// Energy at `now` from a snapshot: the counter lags real time by the time
// since its last refresh, during which the GPU drew (about) `power`. Any
// power from 0 W to `ceiling` (the GPU's highest power limit) is possible in
// that time, which bounds the error of the estimate.
// `max_age`: a refresh further back is not trusted (synchronous reads); a
// sampled edge trusts any age, its bound growing with it.
EdgeEstimate energy_at(const EnergySnapshot& s, std::optional<SystemClock::time_point> now, Watts ceiling,
                       SystemClock::duration max_age = kMaxRefreshAge);

// The warning for a window shorter than the counter's update period. Without
// fmt's format-string parsing: it is built on every short window (a few
// hundred ns of a sampled edge pair otherwise).
std::string short_window_warning(Seconds length);

// A GPU that stopped answering: its energy is unknown, left out of totals,
// and the warning says why.
EnergyValue lost_value(EnergySource source, std::string warning);

// The watch's view of a GPU read together with `snapshot`. While the counter
// is stuck, the stand-in energy is brought up to `now`: the watch's own runs
// to its last read, up to one period ago, and an edge falling between two
// reads would otherwise miss that part.
CounterWatch::GpuView watched_at(CounterWatch::GpuView view, const EnergySnapshot& snapshot, Timestamp now);

// A counter read at an edge, or what stands in for it: a counter that
// refuses to be read (NOT_SUPPORTED) on a GPU the watch read before stands
// still at its last good read, and `watched` becomes stuck from then on (the
// watch's compensation, or the power since that read, carries the energy, as
// for a stuck counter). Any other failure (a lost GPU) stays an error.
Result<EnergySnapshot> counter_or_stand_in(Result<EnergySnapshot> snapshot, CounterWatch::GpuView& watched);

// A counter GPU's value from its two edges: the counter's difference plus
// what the watch compensated in between, never below 0 J, with both edges'
// bounds.
EnergyValue counter_difference(const CounterEdge& begin, const EdgeEstimate& end,
                               const CounterWatch::GpuView& watched);
// Its energy alone: the counter's difference plus the watch's compensation
// in between (`begin_compensation`, `end_compensation`: the views' at each
// edge), never below 0 J.
Joules counter_difference_energy(Joules begin, Joules end, Joules begin_compensation, Joules end_compensation);

// What happened to the counter during the window, from the stats and the
// watch's view at both edges: restarts, glitches, outages, a stuck counter.
void note_counter_history(EnergyValue& value, unsigned gpu, const CounterEdge& begin,
                          const CounterWatch::GpuView& watched, const std::optional<CounterStats>& end_stats,
                          Timestamp end);

// A window whose average power is above the GPU's highest power limit
// `ceiling` (by more than a tenth, or one counter period's worth on a short
// window), which no GPU sustains: the counter or a clock is wrong (a
// wall-clock step under a simulator, a counter that jumped), and the value
// says so. Nothing when the ceiling is unknown (0 W).
void note_impossible_power(EnergyValue& value, unsigned gpu, Watts ceiling, Seconds time);

// A GPU that measured exactly zero (a window shorter than the counter's
// update period): instant power × time with approx_instant_energy (`instant`
// has the GPUs with a reading), otherwise a warning.
void mark_zeros(std::map<unsigned, EnergyValue>& values, bool approx_instant_energy,
                const std::map<unsigned, Watts>& instant, Seconds time);

}  // namespace zeus::monitor_detail
