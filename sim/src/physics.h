// Lazy physics of one simulated GPU. Nothing runs in the background: every
// call first integrates the GPU from its last update to "now", stepping from
// event to event (counter refresh ticks, power-window starts, configured fault
// times, completion of work) with substeps of at most 10 ms. Within a substep
// the operating point (clock, power) is constant, so the ground-truth energy
// is the exact integral of the simulated power, and the temperature follows
// the exact exponential solution of the thermal RC model.
#pragma once

#include "shared_state.h"

namespace zeus::sim {

inline constexpr double kMaxSubstepS = 0.010;
inline constexpr double kTimeEpsilonS = 1e-9;

struct OperatingPoint {
  double clock_mhz = 0;
  double power_w = 0;
  double utilization = 0;  // reported utilization in [0, 1]
  double leakage_w = 0;
  double util_scale = 1;        // shares of utilization loads when they sum above 1
  double trace_epoch_rate = 0;  // epochs per second of each trace load
};

// Clock and power of `gpu` at its current temperature under the loads active now.
OperatingPoint operating_point(const SharedState& state, unsigned gpu);

// Work per second that `load` completes at operating point `op`.
double load_work_rate(const GpuParams& params, const OperatingPoint& op, const LoadSlot& load);

// Power at clock f for utilization u (utilization loads only).
double dynamic_power_w(const GpuParams& params, double utilization, double clock_mhz);

// Integrates `gpu` up to time t (simulator seconds). No-op when t is not later
// than the last update. With `stop_when_completed`, stops early at the moment
// that load completes its work (how the virtual clock finds completion times).
void advance_gpu(SharedState& state, unsigned gpu, double t, const LoadSlot* stop_when_completed = nullptr);

// Initial dynamic state right after the state is created.
void initialize_dynamics(GpuState& gpu);

}  // namespace zeus::sim
