// Shared plumbing of the exported NVML functions: device handles, the
// "initialised?" and "valid handle?" checks every call makes in the same order
// as real NVML, and the exception barrier (nothing may unwind into C callers).
#pragma once

#include <cmath>
#include <cstring>
#include <exception>
#include <memory>

#include "device/nvml/nvml_abi.h"
#include "driver_latency.h"
#include "session.h"

// The opaque type behind nvmlDevice_t. Handles point into a static array, so
// they stay valid across nvmlShutdown/nvmlInit like real NVML handles do.
struct nvmlDevice_st {
  unsigned index;
};

namespace zeus::sim::nvml {

nvmlDevice_t handle_for(unsigned index);
// Index of a handle, or -1 if it is not one of ours.
int index_of(nvmlDevice_t device);

inline unsigned to_milli(double value) {
  return value <= 0 ? 0u : static_cast<unsigned>(std::llround(value * 1000.0));
}

// The integer a C caller passed for an enum parameter. C callers may pass any
// int (e.g. a sensor id from a newer nvml.h); reading it through the C++ enum
// type would be undefined for values outside the enum's range.
template <typename Enum>
unsigned raw_enum(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(unsigned));
  unsigned raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

// Copies a NUL-terminated string into an NVML out-buffer.
inline nvmlReturn_t copy_out(const char* src, char* dst, unsigned length) {
  if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
  const std::size_t needed = std::strlen(src) + 1;
  if (length < needed) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(dst, src, needed);
  return NVML_SUCCESS;
}

// Runs f(Simulator&) once nvmlInit holds the simulator.
template <typename F>
nvmlReturn_t system_call(F&& f) noexcept {
  try {
    if (!session_nvml_initialized()) return NVML_ERROR_UNINITIALIZED;
    std::shared_ptr<Simulator> sim = session_current();
    if (!sim) return NVML_ERROR_UNINITIALIZED;
    return f(*sim);
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

// Runs f(Simulator&, GpuState&, double now) on the device's up-to-date state,
// under the state lock, after the checks real NVML makes: initialised, valid
// handle, GPU initialised (configured init_error), GPU not lost. The call
// first costs its caller the GPU's configured latency for `call`, outside the
// lock: a slow driver delays its caller, not every other process.
// device_state_call gives f the whole state and the GPU's index instead:
// f(Simulator&, SharedState&, unsigned index, double now), for calls about the loads
// and processes on the GPU.
template <typename F>
nvmlReturn_t device_state_call(DriverCall call, nvmlDevice_t device, F&& f) noexcept {
  return system_call([&](Simulator& sim) -> nvmlReturn_t {
    const int index = index_of(device);
    if (index < 0 || static_cast<unsigned>(index) >= sim.gpu_count()) return NVML_ERROR_INVALID_ARGUMENT;
    wait_driver_latency(sim.config().gpus[static_cast<unsigned>(index)].driver_latency.of(call));
    return sim.with_gpu(static_cast<unsigned>(index), [&](SharedState& s, double now) -> nvmlReturn_t {
      GpuState& gpu = s.gpus[index];
      if (gpu.params.fault_init_error != 0) return static_cast<nvmlReturn_t>(gpu.params.fault_init_error);
      if (gpu.dyn.lost) return NVML_ERROR_GPU_IS_LOST;
      return f(sim, s, static_cast<unsigned>(index), now);
    });
  });
}

template <typename F>
nvmlReturn_t device_call(DriverCall call, nvmlDevice_t device, F&& f) noexcept {
  return device_state_call(call, device, [&](Simulator& sim, SharedState& s, unsigned index, double now) {
    return f(sim, s.gpus[index], now);
  });
}

// Every device query without a latency of its own.
template <typename F>
nvmlReturn_t device_call(nvmlDevice_t device, F&& f) noexcept {
  return device_call(DriverCall::kQuery, device, std::forward<F>(f));
}

}  // namespace zeus::sim::nvml
