// Static description of one simulated GPU: identity, power, thermal, clock and
// counter parameters, permissions and configured faults. Plain old data because
// it is copied into the shared state file, where every process reads it.
#pragma once

#include <cstdint>

#include "driver_latency.h"

namespace zeus::sim {

inline constexpr unsigned kMaxGraphicsClocks = 256;
inline constexpr unsigned kMaxMemoryClocks = 8;

enum class PowerUsageSource : std::uint32_t {
  kInstant = 0,    // GA100 and older: nvmlDeviceGetPowerUsage is the instant reading
  kAverage1s = 1,  // other Ampere and newer: the 1 s average
};

struct GpuParams {
  // Identity.
  char model[32];
  char name[96];
  char uuid[96];
  char serial[32];
  char pci_bus_id[32];         // "00000000:07:00.0"
  char pci_bus_id_legacy[16];  // "0000:07:00.0"
  std::uint32_t pci_domain, pci_bus, pci_device;
  std::uint32_t pci_device_id, pci_subsystem_id;
  std::uint32_t architecture;  // NVML_DEVICE_ARCH_*
  std::int32_t cc_major, cc_minor;
  std::uint64_t memory_total_bytes;

  // Power model: P = idle + leakage*(T - Tref)+ + max_dynamic * util * (f/fmax)^exponent.
  double idle_w;
  double max_dynamic_w;
  double leakage_w_per_c;
  double leakage_reference_c;
  double clock_exponent;
  double limit_min_w, limit_max_w, limit_default_w;
  double module_extra_w;         // added to GPU power for the MODULE scope (e.g. Grace CPU)
  double memory_power_fraction;  // MEMORY scope reading = fraction of the GPU reading

  // Thermal RC model.
  double ambient_c;
  double thermal_resistance_c_per_w;
  double thermal_time_constant_s;
  double initial_temperature_c;
  double throttle_temperature_c;  // above it the clock ceiling drops ...
  double throttle_mhz_per_c;      // ... by this many MHz per degree

  // Clocks.
  double graphics_max_mhz, graphics_min_mhz;
  std::uint32_t memory_clock_mhz;
  std::uint32_t graphics_clock_count;
  std::uint32_t graphics_clocks_mhz[kMaxGraphicsClocks];  // descending, like NVML
  std::uint32_t memory_clock_count;
  std::uint32_t memory_clocks_mhz[kMaxMemoryClocks];

  // Counters and sensor features.
  double energy_period_s;
  double power_period_s;
  double power_window_s;
  double power_noise_w;
  PowerUsageSource power_usage_source;
  bool energy_counter_supported;
  bool power_average_field_supported;
  bool gpu_scope_supported;
  bool module_scope_supported;
  bool memory_scope_supported;
  std::uint64_t initial_energy_mj;
  std::uint64_t noise_seed;

  // Permissions of the setters (false -> NVML_ERROR_NO_PERMISSION).
  bool can_set_power_limit;
  bool can_set_clocks;
  bool can_set_persistence;

  // Configured faults. Times are simulator seconds; negative = never.
  bool fault_energy_not_supported;
  std::int32_t fault_init_error;  // nvmlReturn_t returned for this GPU's handle, 0 = none
  double fault_counter_reset_at_s;
  double fault_stuck_counter_after_s;
  double fault_spike_every_s;  // every so often one instant reading shows +spike_extra_w
  double fault_spike_extra_w;

  // What each NVML call costs its caller (driver_latency.h).
  DriverLatency driver_latency;
};

}  // namespace zeus::sim
