/*
 * Our own declarations of the subset of NVML's stable C ABI that Zeus uses
 * and that the GPU simulator implements. Written from NVIDIA's public API
 * documentation; no NVIDIA header is needed to build. Layouts, enum values
 * and exported symbol names must match the real libnvidia-ml.so.1 exactly,
 * because the same code talks to the real library on a GPU machine.
 *
 * Plain C so that the simulator, C test clients and C++ share one file.
 */
#ifndef ZEUS_NVML_ABI_H
#define ZEUS_NVML_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlEnableState_enum {
    NVML_FEATURE_DISABLED = 0,
    NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffff

typedef enum nvmlTemperatureSensors_enum {
    NVML_TEMPERATURE_GPU = 0
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlValueType_enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
    NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

/* Field ids (nvmlDeviceGetFieldValues). */
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_POWER_AVERAGE 185
#define NVML_FI_DEV_POWER_INSTANT 186

/* Power scopes, passed in nvmlFieldValue_t.scopeId for the power fields. */
#define NVML_POWER_SCOPE_GPU 0u
#define NVML_POWER_SCOPE_MODULE 1u
#define NVML_POWER_SCOPE_MEMORY 2u

typedef struct nvmlFieldValue_st {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;   /* CPU time of the value, microseconds since 1970 */
    long long latencyUsec; /* how long the value took to update */
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80

typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* Versioned structs carry sizeof | version << 24 in their first field, as NVML's
 * headers define them; a mismatch gives NVML_ERROR_ARGUMENT_VERSION_MISMATCH. */
typedef struct nvmlTemperature_v1_st {
    unsigned int version; /* nvmlTemperature_v1 */
    nvmlTemperatureSensors_t sensorType;
    int temperature; /* degrees C */
} nvmlTemperature_v1_t;
#define nvmlTemperature_v1 ((unsigned int)(sizeof(nvmlTemperature_v1_t) | (1U << 24)))

/* Chip-to-chip (NVLink-C2C) mode: enabled on Grace Hopper. No version field. */
typedef struct nvmlC2cModeInfo_v1_st {
    unsigned int isC2cEnabled;
} nvmlC2cModeInfo_v1_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* A process with a compute context on a device (nvmlProcessInfo_v2_t, which
 * nvmlDeviceGetComputeRunningProcesses_v3 writes; pynvml declares the same
 * fields as c_nvmlProcessInfo_v2_t). The instance ids are 0xFFFFFFFF when MIG is off. */
typedef struct nvmlProcessInfo_v2_st {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes; NVML_VALUE_NOT_AVAILABLE when unknown */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;
typedef nvmlProcessInfo_v2_t nvmlProcessInfo_t;
#define NVML_VALUE_NOT_AVAILABLE_ULL (~0ULL)

/* One per-process utilization sample (nvmlDeviceGetProcessUtilization; pynvml's
 * c_nvmlProcessUtilizationSample_t): the percent of one driver sampling period. */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU timestamp, microseconds */
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/*
 * Function pointer types. The exported symbol names differ from the C names
 * for some functions (nvml.h maps nvmlInit to nvmlInit_v2 and so on): the
 * comment after each type gives the exported symbol(s), newest first.
 */
typedef nvmlReturn_t (*nvmlInit_fn)(void);                        /* nvmlInit_v2, nvmlInit */
typedef nvmlReturn_t (*nvmlInitWithFlags_fn)(unsigned int flags); /* nvmlInitWithFlags */
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);                    /* nvmlShutdown */
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);   /* nvmlErrorString */
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char* version, unsigned int length);
typedef nvmlReturn_t (*nvmlSystemGetNVMLVersion_fn)(char* version, unsigned int length);
typedef nvmlReturn_t (*nvmlSystemGetCudaDriverVersion_fn)(int* cudaDriverVersion); /* _v2 too */
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int* count); /* nvmlDeviceGetCount_v2 */
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int index, nvmlDevice_t* device); /* _v2 */
typedef nvmlReturn_t (*nvmlDeviceGetHandleByUUID_fn)(const char* uuid, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_fn)(const char* pciBusId, nvmlDevice_t* device); /* _v2 */
typedef nvmlReturn_t (*nvmlDeviceGetIndex_fn)(nvmlDevice_t device, unsigned int* index);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char* uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_fn)(nvmlDevice_t device, nvmlPciInfo_t* pci); /* _v3, _v2, plain */
typedef nvmlReturn_t (*nvmlDeviceGetArchitecture_fn)(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch);
typedef nvmlReturn_t (*nvmlDeviceGetCudaComputeCapability_fn)(nvmlDevice_t device, int* major, int* minor);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t device, unsigned long long* energy_mj);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device, unsigned int* power_mw);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values);
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp_c);
/* Drivers 565 and newer. */
typedef nvmlReturn_t (*nvmlDeviceGetTemperatureV_fn)(nvmlDevice_t device, nvmlTemperature_v1_t* temperature);
/* Drivers 550 and newer; NOT_SUPPORTED on GPUs without NVLink-C2C. */
typedef nvmlReturn_t (*nvmlDeviceGetC2cModeInfoV_fn)(nvmlDevice_t device, nvmlC2cModeInfo_v1_t* info);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimit_fn)(nvmlDevice_t device, unsigned int* limit_mw);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimitConstraints_fn)(nvmlDevice_t device, unsigned int* min_mw, unsigned int* max_mw);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementDefaultLimit_fn)(nvmlDevice_t device, unsigned int* default_mw);
typedef nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit_fn)(nvmlDevice_t device, unsigned int* limit_mw);
typedef nvmlReturn_t (*nvmlDeviceSetPowerManagementLimit_fn)(nvmlDevice_t device, unsigned int limit_mw);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedMemoryClocks_fn)(nvmlDevice_t device, unsigned int* count, unsigned int* clocks_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedGraphicsClocks_fn)(nvmlDevice_t device, unsigned int memory_clock_mhz, unsigned int* count, unsigned int* clocks_mhz);
typedef nvmlReturn_t (*nvmlDeviceSetGpuLockedClocks_fn)(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz);
typedef nvmlReturn_t (*nvmlDeviceResetGpuLockedClocks_fn)(nvmlDevice_t device);
typedef nvmlReturn_t (*nvmlDeviceSetMemoryLockedClocks_fn)(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz);
typedef nvmlReturn_t (*nvmlDeviceResetMemoryLockedClocks_fn)(nvmlDevice_t device);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetMaxClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetPersistenceMode_fn)(nvmlDevice_t device, nvmlEnableState_t* mode);
typedef nvmlReturn_t (*nvmlDeviceSetPersistenceMode_fn)(nvmlDevice_t device, nvmlEnableState_t mode);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t device, nvmlUtilization_t* utilization);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device, nvmlMemory_t* memory);
/* Sizing: *infoCount = 0 and infos = NULL gives NVML_SUCCESS when there is no
 * process, else NVML_ERROR_INSUFFICIENT_SIZE with the count written. */
typedef nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_fn)(nvmlDevice_t device, unsigned int* infoCount,
                                                                nvmlProcessInfo_t* infos); /* _v3 */
/* Samples newer than lastSeenTimeStamp (0: all the driver holds). Sizing:
 * utilization = NULL gives NVML_ERROR_INSUFFICIENT_SIZE with the count written;
 * NVML_ERROR_NOT_FOUND when no sample is newer. Not supported on MIG. */
typedef nvmlReturn_t (*nvmlDeviceGetProcessUtilization_fn)(nvmlDevice_t device,
                                                           nvmlProcessUtilizationSample_t* utilization,
                                                           unsigned int* processSamplesCount,
                                                           unsigned long long lastSeenTimeStamp);

#ifdef __cplusplus
}
#endif

#endif /* ZEUS_NVML_ABI_H */
