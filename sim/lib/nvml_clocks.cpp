// Clock queries and the clock-locking setters that the frequency optimizers use.
#include <algorithm>
#include <type_traits>

#include "nvml_common.h"
#include "nvml_functions.h"

using namespace zeus::sim;
using namespace zeus::sim::nvml;

static_assert(std::is_same_v<decltype(&nvmlDeviceGetSupportedGraphicsClocks), nvmlDeviceGetSupportedGraphicsClocks_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceSetGpuLockedClocks), nvmlDeviceSetGpuLockedClocks_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetClockInfo), nvmlDeviceGetClockInfo_fn>);

namespace {

// The video clock is not modelled separately; it follows the graphics clock.
constexpr double kVideoClockRatio = 0.9;

nvmlReturn_t copy_list(const std::uint32_t* list, unsigned n, unsigned* count, unsigned* out) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  if (*count < n || !out) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(list, list + n, out);
  *count = n;
  return NVML_SUCCESS;
}

unsigned memory_clock_now(const GpuState& gpu) {
  unsigned clock = gpu.params.memory_clock_mhz;
  if (gpu.dyn.mem_locked_max_mhz > 0) clock = std::min(clock, gpu.dyn.mem_locked_max_mhz);
  return clock;
}

nvmlReturn_t clock_value(unsigned type, double graphics_mhz, unsigned memory_mhz, unsigned* clock) {
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
      *clock = static_cast<unsigned>(std::lround(graphics_mhz));
      return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
      *clock = memory_mhz;
      return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO:
      *clock = static_cast<unsigned>(std::lround(graphics_mhz * kVideoClockRatio));
      return NVML_SUCCESS;
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count, unsigned int* clocks) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    return copy_list(gpu.params.memory_clocks_mhz, gpu.params.memory_clock_count, count, clocks);
  });
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memory_mhz, unsigned int* count,
                                                  unsigned int* clocks) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    const GpuParams& p = gpu.params;
    if (std::find(p.memory_clocks_mhz, p.memory_clocks_mhz + p.memory_clock_count, memory_mhz) ==
        p.memory_clocks_mhz + p.memory_clock_count) {
      return NVML_ERROR_NOT_FOUND;
    }
    return copy_list(p.graphics_clocks_mhz, p.graphics_clock_count, count, clocks);
  });
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_clocks) return NVML_ERROR_NO_PERMISSION;
    if (min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
    // Like the driver, clamp requests into the supported range.
    const auto lo = static_cast<unsigned>(gpu.params.graphics_min_mhz);
    const auto hi = static_cast<unsigned>(gpu.params.graphics_max_mhz);
    gpu.dyn.locked_min_mhz = std::clamp(min_mhz, lo, hi);
    gpu.dyn.locked_max_mhz = std::clamp(max_mhz, lo, hi);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_clocks) return NVML_ERROR_NO_PERMISSION;
    gpu.dyn.locked_min_mhz = 0;
    gpu.dyn.locked_max_mhz = 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_clocks) return NVML_ERROR_NO_PERMISSION;
    if (min_mhz > max_mhz || max_mhz == 0) return NVML_ERROR_INVALID_ARGUMENT;
    gpu.dyn.mem_locked_min_mhz = min_mhz;
    gpu.dyn.mem_locked_max_mhz = max_mhz;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_clocks) return NVML_ERROR_NO_PERMISSION;
    gpu.dyn.mem_locked_min_mhz = 0;
    gpu.dyn.mem_locked_max_mhz = 0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    return clock_value(raw_enum(type), gpu.dyn.clock_mhz, memory_clock_now(gpu), clock);
  });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    return clock_value(raw_enum(type), gpu.params.graphics_max_mhz, gpu.params.memory_clock_mhz, clock);
  });
}

}  // extern "C"
