// Library lifetime and system-level queries: init/shutdown, error strings,
// driver versions, device count and handle lookup.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>

#include "last_error.h"
#include "nvml_common.h"
#include "nvml_errors.h"
#include "nvml_functions.h"

namespace zeus::sim::nvml {
namespace {

constexpr std::array<nvmlDevice_st, kMaxGpus> numbered_devices() {
  std::array<nvmlDevice_st, kMaxGpus> devices{};
  for (unsigned i = 0; i < kMaxGpus; ++i) devices[i].index = i;
  return devices;
}
std::array<nvmlDevice_st, kMaxGpus> g_devices = numbered_devices();

nvmlReturn_t init() noexcept {
  try {
    session_open(Opener::kNvml);
  } catch (const std::exception& e) {
    // Real NVML has no channel for the reason; stderr is where users look.
    std::fprintf(stderr, "%s\n", e.what());
    set_last_error(e.what());
    return NVML_ERROR_UNKNOWN;
  }
  const std::shared_ptr<Simulator> sim = session_current();
  if (!sim || !sim->config().driver_loaded) {
    session_close(Opener::kNvml);
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  return NVML_SUCCESS;
}

// State of GPU `index` as a handle lookup sees it.
nvmlReturn_t handle_status(const GpuState& gpu) {
  if (gpu.params.fault_init_error != 0) return static_cast<nvmlReturn_t>(gpu.params.fault_init_error);
  if (gpu.dyn.lost) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

template <typename Match>
nvmlReturn_t find_handle(bool arguments_ok, nvmlDevice_t* device, Match&& match) {
  return system_call([&](Simulator& sim) -> nvmlReturn_t {
    if (!arguments_ok) return NVML_ERROR_INVALID_ARGUMENT;
    return sim.with_gpu(kAllGpus, [&](SharedState& s, double) -> nvmlReturn_t {
      for (unsigned i = 0; i < sim.gpu_count(); ++i) {
        if (!match(s.gpus[i].params)) continue;
        const nvmlReturn_t status = handle_status(s.gpus[i]);
        if (status == NVML_SUCCESS) *device = handle_for(i);
        return status;
      }
      return NVML_ERROR_NOT_FOUND;
    });
  });
}

// Accepts "domain:bus:device.function" (any domain width) or "bus:device.function", hex, any case.
bool parse_bus_id(const char* text, unsigned& domain, unsigned& bus, unsigned& dev) {
  unsigned fn = 0;
  char tail = 0;
  if (std::sscanf(text, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) == 4) return true;
  domain = 0;
  return std::sscanf(text, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3;
}

nvmlReturn_t handle_by_bus_id(const char* bus_id, nvmlDevice_t* device) {
  unsigned domain = 0, bus = 0, dev = 0;
  const bool ok = bus_id && device && parse_bus_id(bus_id, domain, bus, dev);
  return find_handle(ok, device, [&](const GpuParams& p) {
    return p.pci_domain == domain && p.pci_bus == bus && p.pci_device == dev;
  });
}

nvmlReturn_t count(unsigned* out) {
  return system_call([&](Simulator& sim) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    *out = sim.gpu_count();
    return NVML_SUCCESS;
  });
}

nvmlReturn_t handle_by_index(unsigned index, nvmlDevice_t* device) {
  return system_call([&](Simulator& sim) -> nvmlReturn_t {
    if (!device || index >= sim.gpu_count()) return NVML_ERROR_INVALID_ARGUMENT;
    return sim.with_gpu(index, [&](SharedState& s, double) {
      const nvmlReturn_t status = handle_status(s.gpus[index]);
      if (status == NVML_SUCCESS) *device = handle_for(index);
      return status;
    });
  });
}

nvmlReturn_t cuda_driver_version(int* version) {
  return system_call([&](Simulator& sim) {
    if (!version) return NVML_ERROR_INVALID_ARGUMENT;
    *version = sim.config().cuda_driver_version;
    return NVML_SUCCESS;
  });
}

}  // namespace

nvmlDevice_t handle_for(unsigned index) { return &g_devices[index]; }

// Constant time for any GPU count: std::less orders pointers into different
// objects too, so a foreign pointer is refused without undefined behaviour.
int index_of(nvmlDevice_t device) {
  const std::less<const nvmlDevice_st*> before;
  if (before(device, g_devices.data()) || !before(device, g_devices.data() + g_devices.size())) return -1;
  return static_cast<int>(device - g_devices.data());
}

}  // namespace zeus::sim::nvml

using namespace zeus::sim;
using namespace zeus::sim::nvml;

// The definitions must keep the exact types of the ABI the project shares.
static_assert(std::is_same_v<decltype(&nvmlInit_v2), nvmlInit_fn>);
static_assert(std::is_same_v<decltype(&nvmlInitWithFlags), nvmlInitWithFlags_fn>);
static_assert(std::is_same_v<decltype(&nvmlErrorString), nvmlErrorString_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetCount_v2), nvmlDeviceGetCount_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByIndex_v2), nvmlDeviceGetHandleByIndex_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByPciBusId_v2), nvmlDeviceGetHandleByPciBusId_fn>);
static_assert(std::is_same_v<decltype(&nvmlSystemGetCudaDriverVersion_v2), nvmlSystemGetCudaDriverVersion_fn>);

extern "C" {

nvmlReturn_t nvmlInit_v2(void) { return init(); }
nvmlReturn_t nvmlInit(void) { return init(); }
// Flags (NO_GPUS, NO_ATTACH) change nothing for simulated GPUs.
nvmlReturn_t nvmlInitWithFlags(unsigned int) { return init(); }

nvmlReturn_t nvmlShutdown(void) {
  try {
    return session_close(Opener::kNvml) ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

const char* nvmlErrorString(nvmlReturn_t result) { return nvml_error_string(result); }

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return system_call([&](Simulator& sim) { return copy_out(sim.config().driver_version.c_str(), version, length); });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return system_call([&](Simulator& sim) { return copy_out(sim.config().nvml_version.c_str(), version, length); });
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) { return cuda_driver_version(v); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) { return cuda_driver_version(v); }

nvmlReturn_t nvmlDeviceGetCount(unsigned int* c) { return count(c); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* c) { return count(c); }

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index(index, device);
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index(index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return find_handle(uuid && device, device, [&](const GpuParams& p) { return std::strcmp(p.uuid, uuid) == 0; });
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* bus_id, nvmlDevice_t* device) {
  return handle_by_bus_id(bus_id, device);
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  return handle_by_bus_id(bus_id, device);
}

}  // extern "C"
