// How long one NVML call takes on the caller's thread. A real driver answers a
// query in tens to hundreds of microseconds (an ioctl into the kernel driver,
// sometimes a round trip to the GPU's firmware); the simulator by itself
// answers in about one. Simulating the driver's cost shows how a caller's cost
// grows with the number of GPUs and the driver's latency (docs/simulator.md
// cites where each default comes from).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zeus::sim {

// The calls whose latency can be configured one by one; every other device
// query is kQuery, every setter (nvmlDeviceSet*, nvmlDeviceReset*) kSetter.
enum class DriverCall : std::uint32_t {
  kTotalEnergy,  // nvmlDeviceGetTotalEnergyConsumption
  kPowerUsage,   // nvmlDeviceGetPowerUsage
  kFieldValues,  // nvmlDeviceGetFieldValues
  kTemperature,  // nvmlDeviceGetTemperature, nvmlDeviceGetTemperatureV
  kQuery,
  kSetter,
  kCount,
};
inline constexpr std::size_t kDriverCallCount = static_cast<std::size_t>(DriverCall::kCount);

// Plain old data: it lives in GpuParams, which the shared state file copies.
struct DriverLatency {
  double us[kDriverCallCount];

  double of(DriverCall call) const { return us[static_cast<std::size_t>(call)]; }
  void set(DriverCall call, double value) { us[static_cast<std::size_t>(call)] = value; }
  void set_all(double value) {
    for (double& v : us) v = value;
  }
};

// The configuration key of a call: the NVML function's name, or "queries" and
// "setters" for the groups.
const char* driver_call_key(DriverCall call);
std::optional<DriverCall> driver_call_from_key(std::string_view key);

// The default for a GPU of this NVML_DEVICE_ARCH_* generation.
DriverLatency default_driver_latency(std::uint32_t architecture);

// Holds the calling thread for `us` microseconds of wall-clock time: spinning,
// as a thread blocked in a driver ioctl keeps its core, so that sub-millisecond
// latencies are not rounded up by the scheduler's timer slack.
void wait_driver_latency(double us);

}  // namespace zeus::sim
