// Processes on the simulated GPUs. Every load belongs to a process (the
// caller's PID or one it chose); the NVML process calls answer from them, and
// each process keeps its ground-truth energy: the energy the GPU drew above
// its idle draw because of it (its dynamic power, plus its part of the leakage
// above the idle equilibrium's, in proportion to its dynamic power).
//
// Sharing between processes (per GPU, zeusSimSetSharing):
//  - concurrent (MPS-like, the default): loads run together; their
//    utilizations add up, scaled down together when they exceed 1.
//  - time_sliced: the GPU runs one process at a time in equal slices, averaged
//    over each physics substep: each of n processes runs 1/n of the time.
// The driver's per-process utilization samples are taken every 1/6 s: the
// share of that period the process kept the SMs busy.
#pragma once

#include <cstdint>
#include <vector>

#include "physics.h"
#include "shared_state.h"

namespace zeus::sim {

inline constexpr double kUtilSamplePeriodS = 1.0 / 6.0;

struct LoadSharing {
  double scale = 1;        // multiplies each utilization load's utilization
  double utilization = 0;  // the GPU's, in [0, 1]
  double power_load = 0;   // Σ utilization × scale × power_weight: what dynamic power is proportional to
};
LoadSharing load_sharing(const SharedState& s, unsigned gpu);

// Charges the substep [t0, t0 + dt] at operating point op to the processes
// and emits the utilization samples whose ticks fall in it.
void account_processes(SharedState& s, unsigned gpu, const OperatingPoint& op, double t0, double dt);

// Distinct processes with an active load on `gpu`, ascending.
std::vector<std::int32_t> running_processes(const SharedState& s, unsigned gpu);
// Samples newer than last_seen_us, oldest first.
std::vector<UtilSample> utilization_samples(const SharedState& s, unsigned gpu, std::int64_t last_seen_us);
// Ground-truth energy of process `pid` on `gpu` (0 when it never ran there).
double process_energy_j(const SharedState& s, unsigned gpu, std::int32_t pid);

}  // namespace zeus::sim
