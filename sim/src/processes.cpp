#include "processes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "errors.h"
#include "sim_clock.h"

namespace zeus::sim {
namespace {

bool active_on(const LoadSlot& load, unsigned gpu) { return load.in_use && !load.completed && load.gpu == gpu; }

// Leakage at the temperature an idle GPU settles at: T = ambient + R (idle + k (T - Tref)).
double idle_leakage_w(const GpuParams& p) {
  const double rk = p.thermal_resistance_c_per_w * p.leakage_w_per_c;
  if (rk >= 1) return 0;  // thermal runaway parameters: no finite equilibrium to subtract
  const double t = (p.ambient_c + p.thermal_resistance_c_per_w * p.idle_w - rk * p.leakage_reference_c) / (1 - rk);
  return p.leakage_w_per_c * std::max(0.0, t - p.leakage_reference_c);
}

bool has_active_load(const SharedState& s, const ProcessRecord& r) {
  return std::any_of(std::begin(s.loads), std::end(s.loads),
                     [&](const LoadSlot& load) { return active_on(load, r.gpu) && load.process_pid == r.pid; });
}

// The process's record; a new one in a free slot, else in the slot of an
// ended process (its truth is then forgotten: 256 records are kept).
ProcessRecord& record_for(SharedState& s, unsigned gpu, std::int32_t pid) {
  ProcessRecord* free_slot = nullptr;
  for (ProcessRecord& r : s.processes) {
    if (r.in_use && r.gpu == gpu && r.pid == pid) return r;
    if (!r.in_use && !free_slot) free_slot = &r;
  }
  for (ProcessRecord& r : s.processes) {
    if (free_slot) break;
    if (!has_active_load(s, r)) free_slot = &r;
  }
  if (!free_slot) throw SimError(Status::kState, "more than 256 processes run at once on the simulated GPUs");
  *free_slot = ProcessRecord{};
  free_slot->in_use = true;
  free_slot->gpu = gpu;
  free_slot->pid = pid;
  return *free_slot;
}

void push_sample(GpuProcesses& gp, const UtilSample& sample) {
  gp.ring[gp.ring_next] = sample;
  gp.ring_next = (gp.ring_next + 1) % kUtilSampleRing;
  gp.ring_count = std::min(gp.ring_count + 1, kUtilSampleRing);
}

// The utilization sample ticks in (t0, t0 + dt], each giving every process on
// the GPU its share of the period just ended (none when it was idle). Only
// the ring's worth of newest ticks is emitted after a long jump.
void emit_samples(SharedState& s, unsigned gpu, double t0, double dt) {
  GpuProcesses& gp = s.gpu_processes[gpu];
  const auto last_tick = static_cast<std::uint64_t>(std::floor((t0 + dt) / kUtilSamplePeriodS));
  if (gp.next_util_tick > last_tick) return;
  std::uint64_t first = gp.next_util_tick;
  if (last_tick - first + 1 > kUtilSampleRing) first = last_tick - kUtilSampleRing + 1;
  const auto at = [&](const ProcessRecord& r, std::uint64_t tick) {
    return r.util_integral_s + r.rate * std::max(0.0, static_cast<double>(tick) * kUtilSamplePeriodS - t0);
  };
  if (first != gp.next_util_tick) {
    for (ProcessRecord& r : s.processes) {
      if (r.in_use && r.gpu == gpu) r.util_at_tick_s = at(r, first - 1);
    }
  }
  // The wall-clock µs of simulated time 0, as Simulator::unix_us_at dates it.
  const std::int64_t created_us = s.header.virtual_clock ? s.header.created_unix_us
                                                         : s.header.created_monotonic_ns / 1000 + wall_offset_us();
  for (std::uint64_t tick = first; tick <= last_tick; ++tick) {
    const double tau = static_cast<double>(tick) * kUtilSamplePeriodS;
    for (ProcessRecord& r : s.processes) {
      if (!r.in_use || r.gpu != gpu) continue;
      const double value = at(r, tick);
      const long percent = std::lround((value - r.util_at_tick_s) / kUtilSamplePeriodS * 100.0);
      r.util_at_tick_s = value;
      if (percent > 0) {
        push_sample(gp, UtilSample{r.pid, static_cast<std::uint32_t>(std::min(percent, 100L)),
                                   created_us + std::llround(tau * 1e6)});
      }
    }
  }
  gp.next_util_tick = last_tick + 1;
}

}  // namespace

LoadSharing load_sharing(const SharedState& s, unsigned gpu) {
  double util_sum = 0;
  std::set<std::int32_t> processes;
  for (const LoadSlot& load : s.loads) {
    if (!active_on(load, gpu) || load.profile >= 0) continue;
    util_sum += load.utilization;
    processes.insert(load.process_pid);
  }
  LoadSharing out;
  if (util_sum <= 0) return out;
  if (s.gpu_processes[gpu].sharing == Sharing::kTimeSliced) out.scale = 1.0 / static_cast<double>(processes.size());
  if (util_sum * out.scale > 1.0) out.scale = 1.0 / util_sum;
  out.utilization = std::min(1.0, util_sum * out.scale);
  for (const LoadSlot& load : s.loads) {
    if (active_on(load, gpu) && load.profile < 0) out.power_load += load.utilization * out.scale * load.power_weight;
  }
  return out;
}

void account_processes(SharedState& s, unsigned gpu, const OperatingPoint& op, double t0, double dt) {
  const GpuParams& p = s.gpus[gpu].params;
  for (ProcessRecord& r : s.processes) {
    if (r.in_use && r.gpu == gpu) r.rate = 0;
  }
  const double clock_factor = std::pow(op.clock_mhz / p.graphics_max_mhz, p.clock_exponent);
  const double excess_leakage_w = std::max(0.0, op.leakage_w - idle_leakage_w(p));
  // Trace loads draw the trace's power, idle included: theirs is what is above idle.
  unsigned trace_loads = 0;
  double dynamic_w = 0;
  for (const LoadSlot& load : s.loads) {
    if (!active_on(load, gpu)) continue;
    if (load.profile >= 0) {
      ++trace_loads;
    } else {
      dynamic_w += p.max_dynamic_w * load.utilization * op.util_scale * load.power_weight * clock_factor;
    }
  }
  const double trace_w = std::max(0.0, op.power_w - p.idle_w - idle_leakage_w(p));
  for (const LoadSlot& load : s.loads) {
    if (!active_on(load, gpu)) continue;
    ProcessRecord& r = record_for(s, gpu, load.process_pid);
    if (load.profile >= 0) {
      r.energy_j += trace_w / trace_loads * dt;
      r.rate += 1.0 / trace_loads;
      continue;
    }
    const double own_w = p.max_dynamic_w * load.utilization * op.util_scale * load.power_weight * clock_factor;
    const double leakage_w = dynamic_w > 0 ? excess_leakage_w * own_w / dynamic_w : 0.0;
    r.energy_j += (own_w + leakage_w) * dt;
    r.rate += load.utilization * op.util_scale;
  }
  emit_samples(s, gpu, t0, dt);
  for (ProcessRecord& r : s.processes) {
    if (r.in_use && r.gpu == gpu) r.util_integral_s += r.rate * dt;
  }
}

std::vector<std::int32_t> running_processes(const SharedState& s, unsigned gpu) {
  std::set<std::int32_t> pids;
  for (const LoadSlot& load : s.loads) {
    if (active_on(load, gpu)) pids.insert(load.process_pid);
  }
  return {pids.begin(), pids.end()};
}

std::vector<UtilSample> utilization_samples(const SharedState& s, unsigned gpu, std::int64_t last_seen_us) {
  const GpuProcesses& gp = s.gpu_processes[gpu];
  std::vector<UtilSample> out;
  for (std::uint32_t i = 0; i < gp.ring_count; ++i) {
    const UtilSample& sample = gp.ring[(gp.ring_next + kUtilSampleRing - gp.ring_count + i) % kUtilSampleRing];
    if (sample.unix_us > last_seen_us) out.push_back(sample);
  }
  return out;
}

double process_energy_j(const SharedState& s, unsigned gpu, std::int32_t pid) {
  for (const ProcessRecord& r : s.processes) {
    if (r.in_use && r.gpu == gpu && r.pid == pid) return r.energy_j;
  }
  return 0;
}

}  // namespace zeus::sim
