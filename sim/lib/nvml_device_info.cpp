// Identity and housekeeping queries of a device: names, PCI, architecture,
// memory, utilization, persistence, processes.
#include <cstdio>
#include <type_traits>

#include "nvml_common.h"
#include "nvml_functions.h"

using namespace zeus::sim;
using namespace zeus::sim::nvml;

static_assert(std::is_same_v<decltype(&nvmlDeviceGetName), nvmlDeviceGetName_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPciInfo_v3), nvmlDeviceGetPciInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMemoryInfo), nvmlDeviceGetMemoryInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetUtilizationRates), nvmlDeviceGetUtilizationRates_fn>);
static_assert(sizeof(zeusSimNvmlPciInfoV1_t) == 52 && sizeof(nvmlPciInfo_t) == 68);
static_assert(sizeof(zeusSimNvmlMemoryV2_t) == 40 && ZEUS_SIM_NVML_MEMORY_V2 == 0x02000028u);

namespace {

constexpr int kBrandTesla = 2;  // NVML_BRAND_TESLA: data-center boards

nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuParams& p = gpu.params;
    *pci = nvmlPciInfo_t{};
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", p.pci_bus_id_legacy);
    std::snprintf(pci->busId, sizeof pci->busId, "%s", p.pci_bus_id);
    pci->domain = p.pci_domain;
    pci->bus = p.pci_bus;
    pci->device = p.pci_device;
    pci->pciDeviceId = p.pci_device_id;
    pci->pciSubSystemId = p.pci_subsystem_id;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t legacy_pci_info(nvmlDevice_t device, zeusSimNvmlPciInfoV1_t* pci) {
  nvmlPciInfo_t current{};
  const nvmlReturn_t status = pci_info(device, pci ? &current : nullptr);
  if (status != NVML_SUCCESS) return status;
  *pci = zeusSimNvmlPciInfoV1_t{};
  std::snprintf(pci->busId, sizeof pci->busId, "%s", current.busIdLegacy);
  pci->domain = current.domain;
  pci->bus = current.bus;
  pci->device = current.device;
  pci->pciDeviceId = current.pciDeviceId;
  pci->pciSubSystemId = current.pciSubSystemId;
  return NVML_SUCCESS;
}

// Memory the simulated driver reserves, and what a running workload occupies.
struct MemoryUse {
  unsigned long long total, reserved, used;
};
MemoryUse memory_use(const GpuState& gpu) {
  const auto total = gpu.params.memory_total_bytes;
  const auto reserved = total / 100;
  const auto used = static_cast<unsigned long long>(static_cast<double>(total) * 0.6 * gpu.dyn.utilization);
  return {total, reserved, used};
}

nvmlReturn_t no_processes(nvmlDevice_t device, unsigned* count) {
  return device_call(device, [&](Simulator&, GpuState&, double) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 0;
    return NVML_SUCCESS;
  });
}

template <typename T, typename Value>
nvmlReturn_t simple(nvmlDevice_t device, T* out, Value&& value) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    *out = static_cast<T>(value(gpu));
    return NVML_SUCCESS;
  });
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return simple(device, index, [&](const GpuState&) { return index_of(device); });
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) { return copy_out(gpu.params.name, name, length); });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) { return copy_out(gpu.params.uuid, uuid, length); });
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  return device_call(device,
                     [&](Simulator&, GpuState& gpu, double) { return copy_out(gpu.params.serial, serial, length); });
}

// Plain and _v2 predate NVML 9's 68-byte nvmlPciInfo_t: their callers pass the
// 52-byte layout, and writing the new one would overrun it by 16 bytes.
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, zeusSimNvmlPciInfoV1_t* pci) {
  return legacy_pci_info(device, pci);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, zeusSimNvmlPciInfoV1_t* pci) {
  return legacy_pci_info(device, pci);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) { return pci_info(device, pci); }

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return simple(device, arch, [](const GpuState& g) { return g.params.architecture; });
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = gpu.params.cc_major;
    *minor = gpu.params.cc_minor;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return simple(device, minor, [&](const GpuState&) { return index_of(device); });
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, int* brand) {
  return simple(device, brand, [](const GpuState&) { return kBrandTesla; });
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int* mode) {
  return simple(device, mode, [](const GpuState&) { return 0; });  // NVML_COMPUTEMODE_DEFAULT
}

nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* display) {
  return simple(device, display, [](const GpuState&) { return NVML_FEATURE_DISABLED; });
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* active) {
  return simple(device, active, [](const GpuState&) { return NVML_FEATURE_DISABLED; });
}

// Data-center boards are passively cooled: no fan to report.
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int*) {
  return device_call(device, [](Simulator&, GpuState&, double) { return NVML_ERROR_NOT_SUPPORTED; });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    const MemoryUse m = memory_use(gpu);
    memory->total = m.total;
    memory->used = m.reserved + m.used;  // v1 counts the driver's reservation as used
    memory->free = m.total - memory->used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, zeusSimNvmlMemoryV2_t* memory) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != ZEUS_SIM_NVML_MEMORY_V2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const MemoryUse m = memory_use(gpu);
    memory->total = m.total;
    memory->reserved = m.reserved;
    memory->used = m.used;
    memory->free = m.total - m.reserved - m.used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
    utilization->gpu = static_cast<unsigned>(std::lround(100.0 * gpu.dyn.utilization));
    utilization->memory = static_cast<unsigned>(std::lround(40.0 * gpu.dyn.utilization));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return simple(device, mode, [](const GpuState& g) {
    return g.dyn.persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  });
}

nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_persistence) return NVML_ERROR_NO_PERMISSION;
    const unsigned raw = raw_enum(mode);
    if (raw != NVML_FEATURE_ENABLED && raw != NVML_FEATURE_DISABLED) return NVML_ERROR_INVALID_ARGUMENT;
    gpu.dyn.persistence_mode = raw == NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* count, void*) {
  return no_processes(device, count);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* count, void*) {
  return no_processes(device, count);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* count, void*) {
  return no_processes(device, count);
}

}  // extern "C"
