/*
 * Our own declarations of the subset of AMD SMI's C ABI (libamd_smi.so) that
 * Zeus uses and that the test fake (tests/amd/fake_amdsmi.cpp) implements.
 * No ROCm header is needed to build.
 *
 * Versions followed: the AMD SMI library ABIs 24 (ROCm 6.2/6.3, library
 * 24.6/24.7), 25 (ROCm 6.4) and 26 (ROCm 7.x). The library's ABI number is
 * its soname suffix (libamd_smi.so.24/.25/.26) and also the first 32-bit
 * field of amdsmi_version_t in all three (`year` in 24/25, `major` in 26),
 * which is how Zeus tells them apart at run time (see amd_library.cpp).
 *
 * Rules this file follows so that one binary works with all three:
 * - Every function declared here has the same C signature in ABIs 24-26.
 *   Enumerations are passed as uint32_t (the size of a C enum on x86-64 and
 *   aarch64 Linux). amdsmi_status_t is a uint32_t for the same reason (its
 *   largest value, 0xFFFFFFFF, is not an int).
 * - Structures whose layout is identical in 24-26 are declared in full
 *   (amdsmi_bdf_t, amdsmi_power_cap_info_t, amdsmi_clk_info_t).
 * - Structures that changed between versions are NOT declared: the caller
 *   passes an over-sized, zeroed buffer (ZEUS_AMDSMI_OUT_BUFFER_SIZE bytes,
 *   more than the largest known version) and reads only fields at the
 *   offsets documented below for the ABI it detected.
 */
#ifndef ZEUS_AMDSMI_ABI_H
#define ZEUS_AMDSMI_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* amdsmi_socket_handle;
typedef void* amdsmi_processor_handle;

typedef uint32_t amdsmi_status_t;
#define AMDSMI_STATUS_SUCCESS 0u
#define AMDSMI_STATUS_INVAL 1u
#define AMDSMI_STATUS_NOT_SUPPORTED 2u
#define AMDSMI_STATUS_NOT_YET_IMPLEMENTED 3u
#define AMDSMI_STATUS_FAIL_LOAD_MODULE 4u
#define AMDSMI_STATUS_FAIL_LOAD_SYMBOL 5u
#define AMDSMI_STATUS_DRM_ERROR 6u
#define AMDSMI_STATUS_API_FAILED 7u
#define AMDSMI_STATUS_TIMEOUT 8u
#define AMDSMI_STATUS_RETRY 9u
#define AMDSMI_STATUS_NO_PERM 10u
#define AMDSMI_STATUS_INTERRUPT 11u
#define AMDSMI_STATUS_IO 12u
#define AMDSMI_STATUS_ADDRESS_FAULT 13u
#define AMDSMI_STATUS_FILE_ERROR 14u
#define AMDSMI_STATUS_OUT_OF_RESOURCES 15u
#define AMDSMI_STATUS_INTERNAL_EXCEPTION 16u
#define AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS 17u
#define AMDSMI_STATUS_INIT_ERROR 18u
#define AMDSMI_STATUS_REFCOUNT_OVERFLOW 19u
#define AMDSMI_STATUS_BUSY 30u
#define AMDSMI_STATUS_NOT_FOUND 31u
#define AMDSMI_STATUS_NOT_INIT 32u
#define AMDSMI_STATUS_NO_SLOT 33u
#define AMDSMI_STATUS_DRIVER_NOT_LOADED 34u
#define AMDSMI_STATUS_NO_DATA 40u
#define AMDSMI_STATUS_INSUFFICIENT_SIZE 41u
#define AMDSMI_STATUS_UNEXPECTED_SIZE 42u
#define AMDSMI_STATUS_UNEXPECTED_DATA 43u
#define AMDSMI_STATUS_NON_AMD_CPU 44u
#define AMDSMI_STATUS_NO_ENERGY_DRV 45u
#define AMDSMI_STATUS_NO_MSR_DRV 46u
#define AMDSMI_STATUS_NO_HSMP_DRV 47u
#define AMDSMI_STATUS_NO_HSMP_SUP 48u
#define AMDSMI_STATUS_NO_HSMP_MSG_SUP 49u
#define AMDSMI_STATUS_HSMP_TIMEOUT 50u
#define AMDSMI_STATUS_NO_DRV 51u
#define AMDSMI_STATUS_FILE_NOT_FOUND 52u
#define AMDSMI_STATUS_ARG_PTR_NULL 53u
#define AMDSMI_STATUS_AMDGPU_RESTART_ERR 54u
#define AMDSMI_STATUS_SETTING_UNAVAILABLE 55u
#define AMDSMI_STATUS_CORRUPTED_EEPROM 56u
#define AMDSMI_STATUS_MAP_ERROR 0xFFFFFFFEu
#define AMDSMI_STATUS_UNKNOWN_ERROR 0xFFFFFFFFu

/* amdsmi_init_flags_t */
#define AMDSMI_INIT_AMD_GPUS (1ull << 1)

/* amdsmi_clk_type_t */
#define AMDSMI_CLK_TYPE_GFX 0u
#define AMDSMI_CLK_TYPE_MEM 4u

/* amdsmi_clk_limit_type_t (amdsmi_set_gpu_clk_limit) */
#define AMDSMI_CLK_LIMIT_MIN 0u
#define AMDSMI_CLK_LIMIT_MAX 1u

/* amdsmi_temperature_type_t / amdsmi_temperature_metric_t */
#define AMDSMI_TEMPERATURE_TYPE_EDGE 0u
#define AMDSMI_TEMPERATURE_TYPE_HOTSPOT 1u /* also called JUNCTION */
#define AMDSMI_TEMP_CURRENT 0u

/* amdsmi_dev_perf_level_t */
#define AMDSMI_DEV_PERF_LEVEL_AUTO 0u

/* Power fields of amdsmi_power_info_t that mean "not available". */
#define AMDSMI_POWER_NOT_AVAILABLE_16 0xFFFFu
#define AMDSMI_POWER_NOT_AVAILABLE_32 0xFFFFFFFFu

#define AMDSMI_GPU_UUID_SIZE 38

/* PCI address: function 3 bits, device 5, bus 8, domain 48 (same in 24-26). */
typedef union {
    struct {
        uint64_t function_number : 3;
        uint64_t device_number : 5;
        uint64_t bus_number : 8;
        uint64_t domain_number : 48;
    } fields;
    uint64_t as_uint;
} amdsmi_bdf_t;

/* Power caps in microwatts (same in 24-26; 64 bytes). */
typedef struct {
    uint64_t power_cap;
    uint64_t default_power_cap;
    uint64_t dpm_cap;
    uint64_t min_power_cap;
    uint64_t max_power_cap;
    uint64_t reserved[3];
} amdsmi_power_cap_info_t;

/* Clock information in MHz (same in 24-26; 32 bytes). */
typedef struct {
    uint32_t clk;
    uint32_t min_clk;
    uint32_t max_clk;
    uint8_t clk_locked;
    uint8_t clk_deep_sleep;
    uint32_t reserved[4];
} amdsmi_clk_info_t;

/*
 * Version-dependent structures, read from an over-sized buffer:
 *
 * amdsmi_version_t (amdsmi_get_lib_version): uint32_t at offset 0 is the ABI
 *   number (24, 25 or 26). 24 bytes in all versions.
 * amdsmi_asic_info_t (amdsmi_get_gpu_asic_info): char market_name[] at
 *   offset 0, NUL-terminated (64 bytes in 24, 256 later). The whole struct is
 *   about 448 bytes in 24 and 896 in 26.
 * amdsmi_power_info_t (amdsmi_get_power_info), power in watts:
 *   ABI 24:     uint32_t current_socket_power at 0, average_socket_power at 4 (68 bytes)
 *   ABI 25, 26: uint64_t socket_power at 0, then uint32_t current_socket_power
 *               at 8 and average_socket_power at 12 (40 and 192 bytes)
 * amdsmi_enumeration_info_t (amdsmi_get_gpu_enumeration_info, ROCm 6.4+):
 *   uint32_t drm_render, drm_card, hsa_id, hip_id: hip_id at offset 12.
 * amdsmi_kfd_info_t (amdsmi_get_gpu_kfd_info, ROCm 6.3+):
 *   uint64_t kfd_id at 0, uint32_t node_id at 8.
 */
#define ZEUS_AMDSMI_OUT_BUFFER_SIZE 2048
#define ZEUS_AMDSMI_VERSION_ABI_OFFSET 0
#define ZEUS_AMDSMI_ASIC_MARKET_NAME_OFFSET 0
#define ZEUS_AMDSMI_ASIC_MARKET_NAME_MAX 256
#define ZEUS_AMDSMI_POWER_V24_CURRENT_OFFSET 0
#define ZEUS_AMDSMI_POWER_V24_AVERAGE_OFFSET 4
#define ZEUS_AMDSMI_POWER_V25_CURRENT_OFFSET 8
#define ZEUS_AMDSMI_POWER_V25_AVERAGE_OFFSET 12
#define ZEUS_AMDSMI_ENUMERATION_HIP_ID_OFFSET 12
#define ZEUS_AMDSMI_KFD_NODE_ID_OFFSET 8

typedef amdsmi_status_t (*amdsmi_init_fn)(uint64_t init_flags);
typedef amdsmi_status_t (*amdsmi_shut_down_fn)(void);
typedef amdsmi_status_t (*amdsmi_status_code_to_string_fn)(amdsmi_status_t status, const char** status_string);
typedef amdsmi_status_t (*amdsmi_get_lib_version_fn)(void* version);
typedef amdsmi_status_t (*amdsmi_get_socket_handles_fn)(uint32_t* socket_count, amdsmi_socket_handle* socket_handles);
typedef amdsmi_status_t (*amdsmi_get_processor_handles_fn)(amdsmi_socket_handle socket_handle,
                                                          uint32_t* processor_count,
                                                          amdsmi_processor_handle* processor_handles);
typedef amdsmi_status_t (*amdsmi_get_gpu_asic_info_fn)(amdsmi_processor_handle handle, void* info);
typedef amdsmi_status_t (*amdsmi_get_gpu_device_uuid_fn)(amdsmi_processor_handle handle, unsigned int* uuid_length,
                                                        char* uuid);
typedef amdsmi_status_t (*amdsmi_get_gpu_device_bdf_fn)(amdsmi_processor_handle handle, amdsmi_bdf_t* bdf);
typedef amdsmi_status_t (*amdsmi_get_gpu_enumeration_info_fn)(amdsmi_processor_handle handle, void* info);
typedef amdsmi_status_t (*amdsmi_get_gpu_kfd_info_fn)(amdsmi_processor_handle handle, void* info);
/* energy_accumulator x counter_resolution = microjoules; timestamp in ns. */
typedef amdsmi_status_t (*amdsmi_get_energy_count_fn)(amdsmi_processor_handle handle, uint64_t* energy_accumulator,
                                                     float* counter_resolution, uint64_t* timestamp);
typedef amdsmi_status_t (*amdsmi_get_power_info_fn)(amdsmi_processor_handle handle, void* info);
typedef amdsmi_status_t (*amdsmi_get_power_cap_info_fn)(amdsmi_processor_handle handle, uint32_t sensor_ind,
                                                       amdsmi_power_cap_info_t* info);
typedef amdsmi_status_t (*amdsmi_set_power_cap_fn)(amdsmi_processor_handle handle, uint32_t sensor_ind,
                                                  uint64_t cap_uw);
typedef amdsmi_status_t (*amdsmi_get_clock_info_fn)(amdsmi_processor_handle handle, uint32_t clk_type,
                                                   amdsmi_clk_info_t* info);
/* MHz. Removed in ABI 27, where amdsmi_set_gpu_clk_limit (24.7+) remains. */
typedef amdsmi_status_t (*amdsmi_set_gpu_clk_range_fn)(amdsmi_processor_handle handle, uint64_t min_mhz,
                                                      uint64_t max_mhz, uint32_t clk_type);
typedef amdsmi_status_t (*amdsmi_set_gpu_clk_limit_fn)(amdsmi_processor_handle handle, uint32_t clk_type,
                                                      uint32_t limit_type, uint64_t mhz);
/* Degrees Celsius. */
typedef amdsmi_status_t (*amdsmi_get_temp_metric_fn)(amdsmi_processor_handle handle, uint32_t sensor_type,
                                                    uint32_t metric, int64_t* temperature);
typedef amdsmi_status_t (*amdsmi_set_gpu_perf_level_fn)(amdsmi_processor_handle handle, uint32_t perf_level);

#ifdef __cplusplus
}
#endif

#endif /* ZEUS_AMDSMI_ABI_H */
