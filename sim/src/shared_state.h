// Layout of the simulator state. The same struct lives either in a file mapped
// MAP_SHARED by every process that names it in ZEUS_SIM_STATE, or in private
// memory. Plain old data only (no pointers, no std:: containers): processes map
// it at different addresses and may be different builds of the same version.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstdint>

#include "gpu_params.h"

namespace zeus::sim {

inline constexpr std::uint64_t kStateMagic = 0x5a45555353494d31ULL;  // "ZEUSSIM1"
inline constexpr std::uint32_t kStateLayoutVersion = 5;              // 4: processes (sim/src/processes.h); 5: and the monotonic clock
// A DGX-class node has 8 GPUs; 64 lets benchmarks show how costs grow with the GPU count.
inline constexpr unsigned kMaxGpus = 64;
inline constexpr unsigned kMaxLoads = 64;
inline constexpr unsigned kMaxProfiles = 16;
inline constexpr unsigned kMaxProfilePoints = 64;
inline constexpr unsigned kPowerTickRing = 128;
// Processes (sim/src/processes.h): records outlive their loads, keeping the truth.
inline constexpr unsigned kMaxProcesses = 256;
inline constexpr unsigned kUtilSampleRing =
    256;  // per GPU, > 40 s of samples at 1/6 s  // > 1 s of power ticks at the shortest allowed period (10 ms)

// Everything about a GPU that changes over time.
struct GpuDynamics {
  double last_update_s;  // physics is integrated up to here
  double temperature_c;
  double energy_j;  // ground truth: exact integral of the simulated power
  double power_w;   // true power during the last substep
  double clock_mhz;
  double utilization;

  // Settings made through NVML.
  double power_limit_w;
  std::uint32_t locked_min_mhz, locked_max_mhz;  // 0/0 = not locked
  std::uint32_t mem_locked_min_mhz, mem_locked_max_mhz;
  bool persistence_mode;

  // Energy counter (mJ): shows offset + floor(energy at the last refresh tick).
  std::int64_t energy_offset_mj;
  std::uint64_t energy_counter_mj;
  std::uint64_t next_energy_tick;  // tick k happens at k * energy_period
  double energy_refreshed_s;

  // Power sensor: tick k at k * power_period shows the mean over [tick - window, tick].
  std::uint64_t next_power_tick;
  bool window_open;
  double window_start_energy_j;
  double tick_energy_ring_j[kPowerTickRing];  // ground-truth energy at tick k, slot k % ring
  double instant_power_w;
  double average_power_w;
  double power_refreshed_s;
  // Integral of the instant-power readings, each held from its refresh to the
  // next, up to power_refreshed_s: what a sampler that saw every refresh
  // integrates (on the virtual clock no sampler can run while time jumps).
  double sensor_energy_j;

  // Injected or configured faults, in effect now.
  bool counter_stuck;
  bool counter_reset_done;
  bool stuck_fault_applied;
  bool lost;
  bool energy_disabled;
  double pending_spike_w;
};

struct GpuState {
  GpuParams params;
  GpuDynamics dyn;
};

struct LoadSlot {
  bool in_use;
  bool completed;      // reached work_target; no longer draws power
  std::int32_t id;
  pid_t owner_pid;
  std::uint32_t gpu;
  std::int32_t profile;  // trace profile index, -1 = utilization load
  double utilization;
  double work_target;  // <= 0: runs until ended
  double work_done;
  double started_s;
  double completed_s;
  // The process the load is attributed to (what the NVML process calls
  // report): the caller's PID, or one the caller chose. owner_pid stays the
  // caller's, whose death ends the load.
  std::int32_t process_pid;
  // Dynamic power per unit of utilization, relative to the GPU's (1: the
  // GPU's max_dynamic_w at full utilization); differs between processes.
  double power_weight;
};

// Ground truth of one process on one GPU (sim/src/processes.cpp).
struct ProcessRecord {
  bool in_use;
  std::int32_t pid;
  std::uint32_t gpu;
  double energy_j;         // its dynamic energy plus its part of the leakage above idle
  double util_integral_s;  // ∫ its SM utilization dt
  double util_at_tick_s;   // the integral at the last utilization sample tick
  double rate;             // its utilization during the current substep
};

struct UtilSample {
  std::int32_t pid;
  std::uint32_t sm_util;  // percent of the sample period
  std::int64_t unix_us;   // NVML's timestamp scale
};

enum class Sharing : std::uint32_t { kConcurrent = 0, kTimeSliced = 1 };

struct GpuProcesses {
  Sharing sharing;
  std::uint64_t next_util_tick;  // tick k at k * kUtilSamplePeriodS
  std::uint32_t ring_next;
  std::uint32_t ring_count;
  UtilSample ring[kUtilSampleRing];
};

struct TraceProfile {
  bool in_use;
  char key[192];
  std::uint32_t points;
  double power_limit_w[kMaxProfilePoints];  // ascending
  double time_per_epoch_s[kMaxProfilePoints];
  double average_power_w[kMaxProfilePoints];
};

struct StateHeader {
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t total_size;
  std::uint64_t config_hash;
  std::uint32_t initialized;  // written last during initialisation
  std::uint32_t gpu_count;
  pthread_mutex_t mutex;  // process-shared, robust
  std::int64_t created_unix_us;  // µs: nanoseconds since 1970 overflow in 2262
  // Simulated time on the real clock is CLOCK_MONOTONIC since this, which
  // counts from boot: a state file from another boot (boot_id) starts over.
  std::int64_t created_monotonic_ns;
  char boot_id[40];
  double virtual_now_s;
  bool virtual_clock;
  std::int32_t next_load_id;
};

struct SharedState {
  StateHeader header;
  GpuState gpus[kMaxGpus];
  LoadSlot loads[kMaxLoads];
  TraceProfile profiles[kMaxProfiles];
  ProcessRecord processes[kMaxProcesses];
  GpuProcesses gpu_processes[kMaxGpus];
};

}  // namespace zeus::sim
