// One open simulator: the configuration plus the mapped state, and the
// operations the NVML layer, the C API and the CLI share. Every operation
// takes the state lock, drops loads whose owning process died, brings the
// GPUs it touches up to "now", then reads or mutates them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config.h"
#include "errors.h"
#include "physics.h"
#include "state_mapping.h"

namespace zeus::sim {

inline constexpr unsigned kAllGpus = ~0u;
// Bounds of the virtual clock. Beyond ~1e9 s a 10 ms substep still moves a
// double, but far beyond (1e15 s) t + substep == t and nothing could advance;
// one call is capped too so that it cannot hold the state lock for long.
inline constexpr double kMaxAdvanceS = 1e7;
inline constexpr double kMaxVirtualTimeS = 1e9;

class Simulator {
 public:
  // Attaches the state named by state_path ("" = private). Throws SimError.
  Simulator(SimConfig config, const std::string& state_path);

  const SimConfig& config() const { return config_; }
  unsigned gpu_count() const { return static_cast<unsigned>(config_.gpus.size()); }
  bool virtual_clock() const { return config_.clock == ClockMode::kVirtual; }
  bool file_backed() const { return mapping_.file_backed(); }
  void after_fork() { mapping_.repair_after_fork(); }

  // Runs f(SharedState&, double now) under the lock after bringing `gpu`
  // (kAllGpus: every GPU) up to now. Throws SimError(kNotFound) for a bad index.
  template <typename F>
  decltype(auto) with_gpu(unsigned gpu, F&& f) {
    if (gpu != kAllGpus && gpu >= gpu_count()) throw_no_such_gpu(gpu);
    SharedState& s = mapping_.state();
    StateLock lock(s);
    const double now = prepare_locked(s, gpu);
    return f(s, now);
  }

  double now();
  void advance_virtual(double seconds);
  // Wall-clock time (µs since 1970) of simulator time t, for NVML timestamps.
  std::int64_t unix_us_at(double t);

  int begin_load(unsigned gpu, double utilization, int profile);
  void end_load(int load_id);
  // Runs `units` of work (epochs for a trace profile); returns the elapsed
  // simulator seconds. Blocks on the real clock.
  double run_work(unsigned gpu, double units, double utilization, int profile);

  int load_trace_profile(const std::string& csv_path, const std::string& workload, int batch_size,
                         const std::string& optimizer);
  int define_trace_profile(const std::string& name, unsigned points, const double* limits, const double* epoch_s,
                           const double* power_w);
  void inject(unsigned gpu, std::string_view fault, double value);

  // Processes (sim/src/simulator_processes.cpp, sim/src/processes.h).
  // A load attributed to process `pid` (0: the caller) whose dynamic power per
  // unit of utilization is power_weight times the GPU's.
  int begin_process_load(unsigned gpu, double utilization, std::int32_t pid, double power_weight);
  void set_sharing(unsigned gpu, std::string_view mode);
  double process_energy_j(unsigned gpu, std::int32_t pid);

 private:
  [[noreturn]] void throw_no_such_gpu(unsigned gpu) const;
  double clock_now_locked(SharedState& s) const;
  double prepare_locked(SharedState& s, unsigned gpu);
  void reap_dead_loads_locked(SharedState& s, double now);
  int add_load_locked(SharedState& s, unsigned gpu, double utilization, int profile, double target, double now);
  void check_profile_locked(const SharedState& s, int profile) const;

  SimConfig config_;
  StateMapping mapping_;
};

// True while process `pid` exists and is not a zombie.
bool process_alive(pid_t pid);

}  // namespace zeus::sim
