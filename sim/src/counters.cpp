#include "counters.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "physics.h"
#include "random.h"

namespace zeus::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double power_tick_time(const GpuParams& p, std::uint64_t k) { return static_cast<double>(k) * p.power_period_s; }
double energy_tick_time(const GpuParams& p, std::uint64_t k) { return static_cast<double>(k) * p.energy_period_s; }

// Index of the last tick at or before t. The cap keeps the conversion defined
// (a double beyond 2^64 cast to uint64_t is undefined behaviour); simulator
// time is bounded far below it.
std::uint64_t tick_index_at(double t, double period) {
  const double k = std::floor(t / period);
  if (!(k > 0)) return 0;
  constexpr double kMaxTick = 9.0e15;  // < 2^53: still exact in double
  return static_cast<std::uint64_t>(std::min(k, kMaxTick));
}

// Number of power periods in the 1 s average.
std::uint64_t average_periods(const GpuParams& p) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(1.0 / p.power_period_s)));
}

double window_start_time(const GpuParams& p, std::uint64_t tick) {
  return power_tick_time(p, tick) - p.power_window_s;
}

// One reading of the power sensor, at tick k, with ground-truth energy e at the tick.
void refresh_power(GpuState& g, std::uint64_t k, double e) {
  const GpuParams& p = g.params;
  GpuDynamics& d = g.dyn;
  const double window_energy = e - d.window_start_energy_j;
  double instant = window_energy / p.power_window_s;
  if (p.power_noise_w > 0) instant += p.power_noise_w * normal_for(p.noise_seed, k);
  if (p.fault_spike_every_s > 0) {
    const double prev = std::floor(power_tick_time(p, k - 1) / p.fault_spike_every_s);
    const double now = std::floor(power_tick_time(p, k) / p.fault_spike_every_s);
    if (now > prev) instant += p.fault_spike_extra_w;
  }
  instant += d.pending_spike_w;
  d.pending_spike_w = 0;
  d.sensor_energy_j += d.instant_power_w * (power_tick_time(p, k) - d.power_refreshed_s);
  d.instant_power_w = std::max(0.0, instant);

  d.tick_energy_ring_j[k % kPowerTickRing] = e;
  const std::uint64_t n = average_periods(p);
  const std::uint64_t back = std::min(n, k);  // shorter history right after creation
  d.average_power_w = (e - d.tick_energy_ring_j[(k - back) % kPowerTickRing]) / (static_cast<double>(back) * p.power_period_s);
  d.power_refreshed_s = power_tick_time(p, k);
  d.window_open = false;
}

void refresh_energy(GpuState& g, std::uint64_t k, double e) {
  GpuDynamics& d = g.dyn;
  if (d.counter_stuck) return;
  d.energy_counter_mj = energy_counter_value(d, e);
  d.energy_refreshed_s = energy_tick_time(g.params, k);
}

void open_window_if_due(GpuState& g, double t, double e) {
  GpuDynamics& d = g.dyn;
  if (!d.window_open && window_start_time(g.params, d.next_power_tick) <= t + kTimeEpsilonS) {
    d.window_open = true;
    d.window_start_energy_j = e;
  }
}

void apply_fault_times(GpuState& g, double t) {
  const GpuParams& p = g.params;
  GpuDynamics& d = g.dyn;
  if (!d.counter_reset_done && p.fault_counter_reset_at_s >= 0 && t >= p.fault_counter_reset_at_s - kTimeEpsilonS) {
    // A driver reload: the counter restarts from 0 at this moment.
    d.counter_reset_done = true;
    d.energy_offset_mj = -static_cast<std::int64_t>(std::floor(d.energy_j * 1000.0));
    d.energy_counter_mj = 0;
    d.energy_refreshed_s = t;
  }
  if (!d.stuck_fault_applied && p.fault_stuck_counter_after_s >= 0 &&
      t >= p.fault_stuck_counter_after_s - kTimeEpsilonS) {
    d.stuck_fault_applied = true;
    d.counter_stuck = true;
  }
}

}  // namespace

std::uint64_t energy_counter_value(const GpuDynamics& d, double energy_j) {
  const std::int64_t value = d.energy_offset_mj + static_cast<std::int64_t>(std::floor(energy_j * 1000.0));
  return value < 0 ? 0 : static_cast<std::uint64_t>(value);
}

double next_sensor_event(const GpuState& g, double t) {
  const GpuParams& p = g.params;
  const GpuDynamics& d = g.dyn;
  double next = std::min(power_tick_time(p, d.next_power_tick), energy_tick_time(p, d.next_energy_tick));
  if (!d.window_open) next = std::min(next, window_start_time(p, d.next_power_tick));
  if (!d.counter_reset_done && p.fault_counter_reset_at_s > t) next = std::min(next, p.fault_counter_reset_at_s);
  if (!d.stuck_fault_applied && p.fault_stuck_counter_after_s > t) {
    next = std::min(next, p.fault_stuck_counter_after_s);
  }
  return next > t ? next : kInf;
}

void process_sensor_events(GpuState& g, double t) {
  const GpuParams& p = g.params;
  GpuDynamics& d = g.dyn;
  // Ticks first: with window == period, the next window opens at this very tick.
  while (power_tick_time(p, d.next_power_tick) <= t + kTimeEpsilonS) {
    if (!d.window_open) {  // only after a skip; the window then covers what we know
      d.window_open = true;
      d.window_start_energy_j = d.energy_j - d.power_w * p.power_window_s;
    }
    refresh_power(g, d.next_power_tick, d.energy_j);
    ++d.next_power_tick;
  }
  open_window_if_due(g, t, d.energy_j);
  while (energy_tick_time(p, d.next_energy_tick) <= t + kTimeEpsilonS) {
    refresh_energy(g, d.next_energy_tick, d.energy_j);
    ++d.next_energy_tick;
  }
  apply_fault_times(g, t);
}

void skip_sensor_events(GpuState& g, double t0, double e0, double power_w, double t1) {
  const GpuParams& p = g.params;
  GpuDynamics& d = g.dyn;
  auto energy_at = [&](double t) { return e0 + power_w * (t - t0); };

  const std::uint64_t first_power_tick_after = tick_index_at(t1, p.power_period_s) + 1;
  if (first_power_tick_after > d.next_power_tick) {
    const std::uint64_t from = std::max(d.next_power_tick, first_power_tick_after - std::min<std::uint64_t>(first_power_tick_after, kPowerTickRing));
    for (std::uint64_t k = from; k < first_power_tick_after; ++k) {
      d.tick_energy_ring_j[k % kPowerTickRing] = energy_at(power_tick_time(p, k));
    }
    // The first skipped tick ends the old reading; the rest read power_w.
    const double first_skipped = power_tick_time(p, d.next_power_tick);
    const double last_skipped = power_tick_time(p, first_power_tick_after - 1);
    d.sensor_energy_j += d.instant_power_w * (first_skipped - d.power_refreshed_s) + power_w * (last_skipped - first_skipped);
    d.instant_power_w = power_w;
    d.average_power_w = power_w;
    d.power_refreshed_s = last_skipped;
    d.next_power_tick = first_power_tick_after;
    d.window_open = false;
  }
  const double ws = window_start_time(p, d.next_power_tick);
  if (!d.window_open && ws <= t1 + kTimeEpsilonS) {
    d.window_open = true;
    d.window_start_energy_j = energy_at(std::max(ws, t0));
  }

  const std::uint64_t first_energy_tick_after = tick_index_at(t1, p.energy_period_s) + 1;
  if (first_energy_tick_after > d.next_energy_tick) {
    refresh_energy(g, first_energy_tick_after - 1, energy_at(energy_tick_time(p, first_energy_tick_after - 1)));
    d.next_energy_tick = first_energy_tick_after;
  }
}

void initialize_sensors(GpuState& g) {
  const GpuParams& p = g.params;
  GpuDynamics& d = g.dyn;
  d.energy_offset_mj = static_cast<std::int64_t>(p.initial_energy_mj);
  d.energy_counter_mj = p.initial_energy_mj;
  d.energy_refreshed_s = 0;
  d.next_energy_tick = 1;
  d.next_power_tick = 1;
  std::fill(std::begin(d.tick_energy_ring_j), std::end(d.tick_energy_ring_j), 0.0);
  d.window_open = false;
  d.window_start_energy_j = 0;
  open_window_if_due(g, 0.0, 0.0);
  d.instant_power_w = d.power_w;
  d.average_power_w = d.power_w;
  d.power_refreshed_s = 0;
  d.sensor_energy_j = 0;
}

}  // namespace zeus::sim
