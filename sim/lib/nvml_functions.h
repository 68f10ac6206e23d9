/*
 * Prototypes of every NVML function the simulator exports, with the extra ABI
 * types that device/nvml/nvml_abi.h does not declare (legacy PCI info, memory
 * info v2). Layouts follow NVIDIA's public nvml.h documentation. Used by the
 * library itself and by the simulator's tests; clients use their own NVML
 * declarations and simply load libnvidia-ml.so.1.
 */
#ifndef ZEUS_SIM_NVML_FUNCTIONS_H
#define ZEUS_SIM_NVML_FUNCTIONS_H

#include "device/nvml/nvml_abi.h"

#if defined(__GNUC__)
#define ZEUS_NVML_EXPORT __attribute__((visibility("default")))
#else
#define ZEUS_NVML_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* nvmlPciInfo_t before NVML 9, as written by nvmlDeviceGetPciInfo and _v2 (52 bytes);
 * only _v3 writes nvmlPciInfo_t (68 bytes). */
typedef struct zeusSimNvmlPciInfoV1_st {
    char busId[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int reserved0, reserved1, reserved2, reserved3;
} zeusSimNvmlPciInfoV1_t;

/* nvmlMemory_v2_t; callers set version = ZEUS_SIM_NVML_MEMORY_V2 (nvmlMemory_v2). */
typedef struct zeusSimNvmlMemoryV2_st {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} zeusSimNvmlMemoryV2_t;
#define ZEUS_SIM_NVML_MEMORY_V2 ((unsigned int)(sizeof(zeusSimNvmlMemoryV2_t) | (2u << 24)))

/* Clock event ("throttle") reasons, nvmlClocksEventReason*. */
#define ZEUS_SIM_NVML_CLOCKS_EVENT_GPU_IDLE 0x1ULL
#define ZEUS_SIM_NVML_CLOCKS_EVENT_APPLICATIONS_CLOCKS 0x2ULL
#define ZEUS_SIM_NVML_CLOCKS_EVENT_SW_POWER_CAP 0x4ULL
#define ZEUS_SIM_NVML_CLOCKS_EVENT_SW_THERMAL 0x20ULL

ZEUS_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlInit(void);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlShutdown(void);
ZEUS_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* pciBusId, nvmlDevice_t* device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, zeusSimNvmlPciInfoV1_t* pci);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, zeusSimNvmlPciInfoV1_t* pci);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minorNumber);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, int* brand);
/* The processes of the loads on the device (sim/src/processes.h). The symbols
 * before _v3 write smaller structs: nvmlProcessInfo_v1_t (pid, memory) for the
 * plain one; _v2 writes the same nvmlProcessInfo_v2_t as _v3. */
typedef struct zeusSimNvmlProcessInfoV1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} zeusSimNvmlProcessInfoV1_t;
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                                   zeusSimNvmlProcessInfoV1_t* infos);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                                      nvmlProcessInfo_t* infos);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                      nvmlProcessInfo_t* infos);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                              nvmlProcessUtilizationSample_t* utilization,
                                                              unsigned int* processSamplesCount,
                                                              unsigned long long lastSeenTimeStamp);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int* mode);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* display);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* isActive);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                       unsigned int* temp);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t* temperature);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device, nvmlC2cModeInfo_v1_t* info);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t* mode);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* minLimit,
                                                                           unsigned int* maxLimit);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* defaultLimit);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int* pState);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, int* pState);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                        unsigned long long* reasons);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count,
                                                                 unsigned int* clocksMHz);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                                   unsigned int* count, unsigned int* clocksMHz);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                                           unsigned int maxGpuClockMHz);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int minMemClockMHz,
                                                              unsigned int maxMemClockMHz);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);

ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, zeusSimNvmlMemoryV2_t* memory);

/* No graphics process runs on a simulated GPU: *infoCount = 0. */
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                                    void* infos);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                                       void* infos);
ZEUS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                                       void* infos);

#ifdef __cplusplus
}
#endif

#endif /* ZEUS_SIM_NVML_FUNCTIONS_H */
