#include "physics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "counters.h"
#include "errors.h"
#include "gpu_params_check.h"
#include "processes.h"
#include "trace_profile.h"

namespace zeus::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A steady GPU (temperature within this of its equilibrium) may skip ahead
// analytically; the residual error is below leakage_w_per_c * this.
constexpr double kSteadyTemperatureC = 1e-3;
// Sensors need this much real stepping before the target to show exact values.
constexpr double kSkipTailS = 1.5;

bool load_is_active_on(const LoadSlot& load, unsigned gpu) {
  return load.in_use && !load.completed && load.gpu == gpu;
}

double clock_ceiling_mhz(const GpuParams& p, const GpuDynamics& d) {
  double ceiling = p.graphics_max_mhz;
  if (d.locked_max_mhz > 0) ceiling = std::min(ceiling, static_cast<double>(d.locked_max_mhz));
  if (d.temperature_c > p.throttle_temperature_c) {
    ceiling = std::min(ceiling, p.graphics_max_mhz - (d.temperature_c - p.throttle_temperature_c) * p.throttle_mhz_per_c);
  }
  return std::max(ceiling, p.graphics_min_mhz);
}

double equilibrium_temperature_c(const GpuParams& p, double power_w) {
  return p.ambient_c + p.thermal_resistance_c_per_w * power_w;
}

// Advances temperature, energy and work by dt at the constant operating point op.
void integrate(SharedState& s, unsigned gpu, const OperatingPoint& op, double dt) {
  GpuState& g = s.gpus[gpu];
  account_processes(s, gpu, op, g.dyn.last_update_s, dt);
  g.dyn.energy_j += op.power_w * dt;
  const double t_eq = equilibrium_temperature_c(g.params, op.power_w);
  g.dyn.temperature_c = t_eq + (g.dyn.temperature_c - t_eq) * std::exp(-dt / g.params.thermal_time_constant_s);
  for (LoadSlot& load : s.loads) {
    if (load_is_active_on(load, gpu)) load.work_done += load_work_rate(g.params, op, load) * dt;
  }
}

// Earliest time after t at which a load with a work target completes.
double next_completion(const SharedState& s, unsigned gpu, const OperatingPoint& op, double t) {
  double next = kInf;
  for (const LoadSlot& load : s.loads) {
    if (!load_is_active_on(load, gpu) || load.work_target <= 0) continue;
    const double rate = load_work_rate(s.gpus[gpu].params, op, load);
    if (rate > 0) next = std::min(next, t + std::max(0.0, load.work_target - load.work_done) / rate);
  }
  return next;
}

void complete(LoadSlot& load, double t) {
  load.work_done = load.work_target;
  load.completed = true;
  load.completed_s = t;
}

// Loads whose work target was reached by time t stop drawing power at t. The
// physics chose t as the completion time, so only rounding separates them.
void mark_completions(SharedState& s, unsigned gpu, double t) {
  for (LoadSlot& load : s.loads) {
    if (!load_is_active_on(load, gpu) || load.work_target <= 0) continue;
    if (load.work_done >= load.work_target - 1e-9 * std::max(1.0, load.work_target)) complete(load, t);
  }
}

// When the next event is not later than t in double precision (t + dt == t),
// time cannot move. Loads due by then complete at t; returns whether any did,
// i.e. whether the zero-length step changed anything.
bool complete_loads_due(SharedState& s, unsigned gpu, const OperatingPoint& op, double t) {
  bool any = false;
  for (LoadSlot& load : s.loads) {
    if (!load_is_active_on(load, gpu) || load.work_target <= 0) continue;
    const double rate = load_work_rate(s.gpus[gpu].params, op, load);
    if (rate > 0 && t + std::max(0.0, load.work_target - load.work_done) / rate <= t) {
      complete(load, t);
      any = true;
    }
  }
  return any;
}

[[noreturn]] void throw_damaged(unsigned gpu, const char* reason) {
  throw SimError(Status::kState, "simulator state is damaged (GPU " + std::to_string(gpu) + ": " + reason +
                                     "); delete the ZEUS_SIM_STATE file and retry");
}

// Steady state over a long gap: jump most of it at constant power instead of
// stepping every 10 ms, so a GPU nobody looked at for a day costs microseconds.
bool try_steady_skip(SharedState& s, unsigned gpu, const OperatingPoint& op, double t, double target) {
  GpuState& g = s.gpus[gpu];
  const double t_eq = equilibrium_temperature_c(g.params, op.power_w);
  if (std::abs(g.dyn.temperature_c - t_eq) > kSteadyTemperatureC) return false;
  const double tail = kSkipTailS + 2 * std::max(g.params.power_period_s, g.params.energy_period_s);
  double skip_to = target - tail;
  const GpuParams& p = g.params;
  if (!g.dyn.counter_reset_done && p.fault_counter_reset_at_s > t) skip_to = std::min(skip_to, p.fault_counter_reset_at_s);
  if (!g.dyn.stuck_fault_applied && p.fault_stuck_counter_after_s > t) {
    skip_to = std::min(skip_to, p.fault_stuck_counter_after_s);
  }
  skip_to = std::min(skip_to, next_completion(s, gpu, op, t));
  if (skip_to - t < 1.0) return false;

  const double e0 = g.dyn.energy_j;
  integrate(s, gpu, op, skip_to - t);
  skip_sensor_events(g, t, e0, op.power_w, skip_to);
  g.dyn.last_update_s = skip_to;
  mark_completions(s, gpu, skip_to);
  process_sensor_events(g, skip_to);
  return true;
}

}  // namespace

double dynamic_power_w(const GpuParams& p, double utilization, double clock_mhz) {
  return p.max_dynamic_w * utilization * std::pow(clock_mhz / p.graphics_max_mhz, p.clock_exponent);
}

OperatingPoint operating_point(const SharedState& s, unsigned gpu) {
  const GpuState& g = s.gpus[gpu];
  const GpuParams& p = g.params;
  const GpuDynamics& d = g.dyn;
  int trace = -1;
  unsigned trace_loads = 0;
  for (const LoadSlot& load : s.loads) {
    if (!load_is_active_on(load, gpu)) continue;
    if (load.profile >= 0) {
      if (trace < 0) trace = load.profile;
      ++trace_loads;
    }
  }
  // How the processes share the GPU (sim/src/processes.h): concurrent loads
  // scaled down together past full utilization, or time slices.
  const LoadSharing sharing = load_sharing(s, gpu);

  OperatingPoint op;
  op.leakage_w = p.leakage_w_per_c * std::max(0.0, d.temperature_c - p.leakage_reference_c);
  op.util_scale = sharing.scale;
  const double ceiling = clock_ceiling_mhz(p, d);

  if (trace >= 0 && s.profiles[trace].in_use) {
    // The measured power already contains idle and leakage; the clock shown is
    // the speed relative to the fastest measured point.
    const TraceProfile& profile = s.profiles[trace];
    const double epoch_s = interpolate_profile(profile, profile.time_per_epoch_s, d.power_limit_w);
    const double fastest_s = *std::min_element(profile.time_per_epoch_s, profile.time_per_epoch_s + profile.points);
    op.power_w = interpolate_profile(profile, profile.average_power_w, d.power_limit_w);
    op.clock_mhz = std::clamp(p.graphics_max_mhz * fastest_s / epoch_s, p.graphics_min_mhz, p.graphics_max_mhz);
    op.utilization = 1.0;
    op.trace_epoch_rate = 1.0 / epoch_s / trace_loads;
    return op;
  }

  const double u = sharing.utilization;
  // Dynamic power follows the power load: utilization weighted by each load's power weight.
  const double w = sharing.power_load;
  op.utilization = u;
  if (u <= 0) {
    op.clock_mhz = d.locked_min_mhz > 0 ? std::clamp(static_cast<double>(d.locked_min_mhz), p.graphics_min_mhz, ceiling)
                                        : p.graphics_min_mhz;
    op.power_w = p.idle_w + op.leakage_w;
    return op;
  }
  // Highest clock whose power fits under the limit: solve
  // idle + leakage + max_dynamic * w * (f / fmax)^alpha = limit for f.
  const double budget = d.power_limit_w - p.idle_w - op.leakage_w;
  double fitting = kInf;
  if (p.max_dynamic_w > 0) {
    fitting = budget > 0 ? p.graphics_max_mhz * std::pow(budget / (p.max_dynamic_w * w), 1.0 / p.clock_exponent) : 0.0;
  }
  op.clock_mhz = std::max(std::min(ceiling, fitting), p.graphics_min_mhz);
  op.power_w = p.idle_w + op.leakage_w + dynamic_power_w(p, w, op.clock_mhz);
  return op;
}

double load_work_rate(const GpuParams& p, const OperatingPoint& op, const LoadSlot& load) {
  if (load.profile >= 0) return op.trace_epoch_rate;
  return load.utilization * op.util_scale * op.clock_mhz / p.graphics_max_mhz;
}

void advance_gpu(SharedState& s, unsigned gpu, double target, const LoadSlot* stop_when_completed) {
  GpuState& g = s.gpus[gpu];
  GpuDynamics& d = g.dyn;
  // Cheap, and the loops below rely on positive periods.
  if (const char* reason = invalid_gpu_params_reason(g.params)) throw_damaged(gpu, reason);
  while (d.last_update_s < target) {
    const double t = d.last_update_s;
    const OperatingPoint op = operating_point(s, gpu);
    d.power_w = op.power_w;
    d.clock_mhz = op.clock_mhz;
    d.utilization = op.utilization;
    if (target - t > 2 * kSkipTailS && try_steady_skip(s, gpu, op, t, target)) {
      if (stop_when_completed && stop_when_completed->completed) break;
      continue;
    }

    const double next = std::min({target, t + kMaxSubstepS, next_sensor_event(g, t), next_completion(s, gpu, op, t)});
    if (!(next > t)) {
      // No time can pass; finishing due loads is the only possible progress.
      if (!complete_loads_due(s, gpu, op, t)) break;
      if (stop_when_completed && stop_when_completed->completed) break;
      continue;
    }
    integrate(s, gpu, op, next - t);
    d.last_update_s = next;
    mark_completions(s, gpu, next);
    process_sensor_events(g, next);
    if (stop_when_completed && stop_when_completed->completed) break;
  }
  // Report the operating point that holds from now on (loads may have changed).
  const OperatingPoint now = operating_point(s, gpu);
  d.power_w = now.power_w;
  d.clock_mhz = now.clock_mhz;
  d.utilization = now.utilization;
}

void initialize_dynamics(GpuState& g) {
  GpuDynamics& d = g.dyn;
  d = GpuDynamics{};
  d.temperature_c = g.params.initial_temperature_c;
  d.power_limit_w = g.params.limit_default_w;
  d.energy_disabled = g.params.fault_energy_not_supported;
  d.clock_mhz = g.params.graphics_min_mhz;
  d.power_w = g.params.idle_w + g.params.leakage_w_per_c * std::max(0.0, d.temperature_c - g.params.leakage_reference_c);
  initialize_sensors(g);
}

}  // namespace zeus::sim
