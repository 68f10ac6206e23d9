// libnvidia-ml.so.1 opened with dlopen, its functions resolved once, NVML
// initialised once per NvmlLibrary and shut down when the last user (every
// NvmlGpu holds a shared_ptr) is gone. Not a global: whoever opens the GPUs
// owns it, so nothing surprising survives into a forked child.
#pragma once

#include <memory>
#include <string>

#include "device/nvml/nvml_abi.h"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::nvml {

struct Functions {
    // Required: without these the library is unusable.
    nvmlInit_fn init = nullptr;
    nvmlShutdown_fn shutdown = nullptr;
    nvmlErrorString_fn error_string = nullptr;
    nvmlDeviceGetCount_fn device_get_count = nullptr;
    nvmlDeviceGetHandleByIndex_fn device_get_handle_by_index = nullptr;
    // Optional: a missing one makes that feature NotSupported / FunctionNotFound.
    nvmlSystemGetDriverVersion_fn system_get_driver_version = nullptr;
    nvmlSystemGetNVMLVersion_fn system_get_nvml_version = nullptr;
    nvmlSystemGetCudaDriverVersion_fn system_get_cuda_driver_version = nullptr;
    nvmlDeviceGetName_fn device_get_name = nullptr;
    nvmlDeviceGetUUID_fn device_get_uuid = nullptr;
    nvmlDeviceGetPciInfo_fn device_get_pci_info = nullptr;
    nvmlDeviceGetArchitecture_fn device_get_architecture = nullptr;
    nvmlDeviceGetTotalEnergyConsumption_fn device_get_total_energy_consumption = nullptr;
    nvmlDeviceGetPowerUsage_fn device_get_power_usage = nullptr;
    nvmlDeviceGetFieldValues_fn device_get_field_values = nullptr;
    nvmlDeviceGetTemperature_fn device_get_temperature = nullptr;
    nvmlDeviceGetClockInfo_fn device_get_clock_info = nullptr;
    nvmlDeviceGetPowerManagementLimit_fn device_get_power_management_limit = nullptr;
    nvmlDeviceGetPowerManagementLimitConstraints_fn device_get_power_management_limit_constraints = nullptr;
    nvmlDeviceGetPowerManagementDefaultLimit_fn device_get_power_management_default_limit = nullptr;
    nvmlDeviceSetPowerManagementLimit_fn device_set_power_management_limit = nullptr;
    nvmlDeviceGetSupportedMemoryClocks_fn device_get_supported_memory_clocks = nullptr;
    nvmlDeviceGetSupportedGraphicsClocks_fn device_get_supported_graphics_clocks = nullptr;
    nvmlDeviceSetGpuLockedClocks_fn device_set_gpu_locked_clocks = nullptr;
    nvmlDeviceResetGpuLockedClocks_fn device_reset_gpu_locked_clocks = nullptr;
    nvmlDeviceSetMemoryLockedClocks_fn device_set_memory_locked_clocks = nullptr;
    nvmlDeviceResetMemoryLockedClocks_fn device_reset_memory_locked_clocks = nullptr;
    nvmlDeviceGetPersistenceMode_fn device_get_persistence_mode = nullptr;
    nvmlDeviceSetPersistenceMode_fn device_set_persistence_mode = nullptr;
    nvmlDeviceGetComputeRunningProcesses_fn device_get_compute_running_processes = nullptr;
    nvmlDeviceGetProcessUtilization_fn device_get_process_utilization = nullptr;
};

class Library {
  public:
    // Loads `path`, resolves symbols and calls nvmlInit. Errors name the
    // library and carry NVML's own message plus the fix.
    static Result<std::shared_ptr<Library>> open(const std::string& path);

    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library();

    [[nodiscard]] const Functions& fn() const { return fn_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    // True when the library is the Zeus GPU simulator, however it was named:
    // simulated numbers are always labelled as such.
    [[nodiscard]] bool is_simulator() const { return lib_.symbol("zeusSimOpen") != nullptr; }

    // NVML's own words for `code`.
    [[nodiscard]] std::string error_string(nvmlReturn_t code) const;
    // A typed Error for a failed call: "<what>: <NVML's message>" plus a hint.
    [[nodiscard]] Error error(nvmlReturn_t code, const std::string& what) const;
    // For an optional function the library does not export.
    [[nodiscard]] static Error missing_function(const char* name);

  private:
    Library(DynamicLibrary lib, std::string path) : lib_(std::move(lib)), path_(std::move(path)) {}
    DynamicLibrary lib_;
    std::string path_;
    Functions fn_;
    bool initialized_ = false;
};

[[nodiscard]] ErrorCode to_error_code(nvmlReturn_t code);
// What a user can do about `code`; empty when nothing useful can be said.
[[nodiscard]] std::string hint_for(nvmlReturn_t code);

}  // namespace zeus::nvml
