/*
 * A plain C NVML client that knows nothing about the simulator: it uses only
 * the ABI types of device/nvml/nvml_abi.h, declares the functions it calls
 * the way nvml.h does, and links against libnvidia-ml. Exit code 0 = success.
 */
#include <stdio.h>
#include <string.h>

#include "device/nvml/nvml_abi.h"

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp);
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* minLimit,
                                                          unsigned int* maxLimit);
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values);

static int failures = 0;

#define CHECK(call, expected)                                                                        \
    do {                                                                                             \
        nvmlReturn_t rc_ = (call);                                                                   \
        if (rc_ != (expected)) {                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, nvmlErrorString(rc_)); \
            ++failures;                                                                              \
        }                                                                                            \
    } while (0)

int main(void) {
    unsigned count = 0, i;
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];

    CHECK(nvmlInit_v2(), NVML_SUCCESS);
    CHECK(nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
    CHECK(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
    printf("driver %s, %u GPUs\n", version, count);
    if (count != 3) {
        fprintf(stderr, "FAIL: expected the 3 GPUs of configs/interop.json, got %u\n", count);
        ++failures;
    }
    for (i = 0; i < count; ++i) {
        nvmlDevice_t dev = NULL;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        unsigned long long energy = 0;
        unsigned power = 0, temp = 0, min_mw = 0, max_mw = 0, limit = 0;
        nvmlFieldValue_t field;
        nvmlReturn_t energy_rc;

        CHECK(nvmlDeviceGetHandleByIndex_v2(i, &dev), NVML_SUCCESS);
        CHECK(nvmlDeviceGetName(dev, name, sizeof name), NVML_SUCCESS);
        CHECK(nvmlDeviceGetUUID(dev, uuid, sizeof uuid), NVML_SUCCESS);
        energy_rc = nvmlDeviceGetTotalEnergyConsumption(dev, &energy);
        /* The third GPU is a P100: pre-Volta boards have no energy counter. */
        if (energy_rc != (i == 2 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS)) {
            fprintf(stderr, "FAIL: energy of GPU %u -> %s\n", i, nvmlErrorString(energy_rc));
            ++failures;
        }
        CHECK(nvmlDeviceGetPowerUsage(dev, &power), NVML_SUCCESS);
        CHECK(nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
        CHECK(nvmlDeviceGetPowerManagementLimitConstraints(dev, &min_mw, &max_mw), NVML_SUCCESS);
        CHECK(nvmlDeviceGetPowerManagementLimit(dev, &limit), NVML_SUCCESS);
        memset(&field, 0, sizeof field);
        field.fieldId = NVML_FI_DEV_POWER_INSTANT;
        field.scopeId = NVML_POWER_SCOPE_GPU;
        CHECK(nvmlDeviceGetFieldValues(dev, 1, &field), NVML_SUCCESS);
        CHECK(field.nvmlReturn, NVML_SUCCESS);
        if (power == 0 || temp == 0 || min_mw >= max_mw || limit > max_mw || limit < min_mw) {
            fprintf(stderr, "FAIL: implausible readings on GPU %u\n", i);
            ++failures;
        }
        printf("%u %s %s energy=%llu mJ power=%u mW temp=%u C limit=%u mW [%u, %u]\n", i, name, uuid, energy, power,
               temp, limit, min_mw, max_mw);
    }
    CHECK(nvmlShutdown(), NVML_SUCCESS);
    CHECK(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    return failures == 0 ? 0 : 1;
}
