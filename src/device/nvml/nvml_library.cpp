#include "device/nvml/nvml_library.hpp"

#include <fmt/format.h>

#include <initializer_list>

namespace zeus::nvml {
namespace {

// nvml.h maps several C names to versioned symbols (nvmlInit -> nvmlInit_v2);
// try the newest first so we get the same entry points a program built
// against the real header would.
template <class Fn>
Fn resolve(const DynamicLibrary& lib, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (auto f = lib.function<Fn>(name)) return f;
    }
    return nullptr;
}

}  // namespace

ErrorCode to_error_code(nvmlReturn_t code) {
    switch (code) {
        case NVML_SUCCESS: return ErrorCode::Unknown;
        case NVML_ERROR_UNINITIALIZED: return ErrorCode::Uninitialized;
        case NVML_ERROR_INVALID_ARGUMENT: return ErrorCode::InvalidArgument;
        case NVML_ERROR_NOT_SUPPORTED: return ErrorCode::NotSupported;
        case NVML_ERROR_NO_PERMISSION: return ErrorCode::NoPermission;
        case NVML_ERROR_ALREADY_INITIALIZED: return ErrorCode::AlreadyInitialized;
        case NVML_ERROR_NOT_FOUND: return ErrorCode::NotFound;
        case NVML_ERROR_INSUFFICIENT_SIZE: return ErrorCode::InsufficientSize;
        case NVML_ERROR_INSUFFICIENT_POWER: return ErrorCode::InsufficientPower;
        case NVML_ERROR_DRIVER_NOT_LOADED: return ErrorCode::DriverNotLoaded;
        case NVML_ERROR_TIMEOUT: return ErrorCode::Timeout;
        case NVML_ERROR_IRQ_ISSUE: return ErrorCode::IrqIssue;
        case NVML_ERROR_LIBRARY_NOT_FOUND: return ErrorCode::LibraryNotFound;
        case NVML_ERROR_FUNCTION_NOT_FOUND: return ErrorCode::FunctionNotFound;
        case NVML_ERROR_CORRUPTED_INFOROM: return ErrorCode::CorruptedInfoRom;
        case NVML_ERROR_GPU_IS_LOST: return ErrorCode::GpuLost;
        case NVML_ERROR_RESET_REQUIRED: return ErrorCode::ResetRequired;
        case NVML_ERROR_OPERATING_SYSTEM: return ErrorCode::OperatingSystem;
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return ErrorCode::LibRmVersionMismatch;
        case NVML_ERROR_IN_USE: return ErrorCode::InUse;
        case NVML_ERROR_MEMORY: return ErrorCode::Memory;
        case NVML_ERROR_NO_DATA: return ErrorCode::NoData;
        case NVML_ERROR_NOT_READY: return ErrorCode::NotReady;
        case NVML_ERROR_GPU_NOT_FOUND: return ErrorCode::NotFound;
        case NVML_ERROR_INVALID_STATE: return ErrorCode::InvalidState;
        case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return ErrorCode::InvalidArgument;
        case NVML_ERROR_FREQ_NOT_SUPPORTED: return ErrorCode::InvalidArgument;
        case NVML_ERROR_VGPU_ECC_NOT_ENABLED: return ErrorCode::NotSupported;
        case NVML_ERROR_DEPRECATED: return ErrorCode::NotSupported;
        case NVML_ERROR_INSUFFICIENT_RESOURCES: return ErrorCode::Memory;
        default: return ErrorCode::Unknown;
    }
}

std::string hint_for(nvmlReturn_t code) {
    switch (code) {
        case NVML_ERROR_NO_PERMISSION:
            return "changing GPU settings needs root (CAP_SYS_ADMIN): run as root, or let zeusd change them "
                   "(set ZEUSD_SOCK_PATH; docs/zeusd-client.md)";
        case NVML_ERROR_DRIVER_NOT_LOADED:
            return "the NVIDIA kernel driver is not loaded; check `nvidia-smi` and `lsmod | grep nvidia`";
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
            return "libnvidia-ml does not match the loaded kernel driver (usually after a driver update); "
                   "reboot or reload the driver";
        case NVML_ERROR_GPU_IS_LOST:
            return "the GPU stopped responding (fell off the bus); see `dmesg` for Xid errors; it needs a reset "
                   "or a reboot";
        case NVML_ERROR_RESET_REQUIRED: return "reset the GPU (`nvidia-smi -r`) or reboot";
        case NVML_ERROR_INSUFFICIENT_POWER: return "check the GPU's auxiliary power cables";
        case NVML_ERROR_FREQ_NOT_SUPPORTED:
            return "choose clocks from the supported list (`zeus show-env`, or supported_graphics_clocks())";
        case NVML_ERROR_CORRUPTED_INFOROM: return "the board's infoROM is corrupted; contact the vendor";
        case NVML_ERROR_IRQ_ISSUE: return "the kernel driver has an interrupt problem; see `dmesg`";
        default: return {};
    }
}

Result<std::shared_ptr<Library>> Library::open(const std::string& path) {
    auto loaded = DynamicLibrary::open(path);
    if (!loaded) {
        auto err = loaded.error();
        err.hint =
            "install the NVIDIA driver (it ships libnvidia-ml.so.1) or set ZEUS_NVML_LIBRARY to its path; "
            "to try Zeus without a GPU, use the simulator (--simulate or ZEUS_SIMULATE=1)";
        return err;
    }
    std::shared_ptr<Library> lib(new Library(std::move(loaded).value(), path));
    const DynamicLibrary& dl = lib->lib_;
    Functions& f = lib->fn_;
    f.init = resolve<nvmlInit_fn>(dl, {"nvmlInit_v2", "nvmlInit"});
    f.shutdown = resolve<nvmlShutdown_fn>(dl, {"nvmlShutdown"});
    f.error_string = resolve<nvmlErrorString_fn>(dl, {"nvmlErrorString"});
    f.device_get_count = resolve<nvmlDeviceGetCount_fn>(dl, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    f.device_get_handle_by_index =
        resolve<nvmlDeviceGetHandleByIndex_fn>(dl, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    for (auto [ptr, name] : {std::pair<void*, const char*>{reinterpret_cast<void*>(f.init), "nvmlInit_v2"},
                             {reinterpret_cast<void*>(f.shutdown), "nvmlShutdown"},
                             {reinterpret_cast<void*>(f.error_string), "nvmlErrorString"},
                             {reinterpret_cast<void*>(f.device_get_count), "nvmlDeviceGetCount_v2"},
                             {reinterpret_cast<void*>(f.device_get_handle_by_index), "nvmlDeviceGetHandleByIndex_v2"}}) {
        if (ptr == nullptr) {
            return Error{ErrorCode::FunctionNotFound,
                         fmt::format("{} does not export {}, which every NVML has", lib->path_, name),
                         "ZEUS_NVML_LIBRARY probably names something that is not NVML", 0};
        }
    }
    f.system_get_driver_version = resolve<nvmlSystemGetDriverVersion_fn>(dl, {"nvmlSystemGetDriverVersion"});
    f.system_get_nvml_version = resolve<nvmlSystemGetNVMLVersion_fn>(dl, {"nvmlSystemGetNVMLVersion"});
    f.system_get_cuda_driver_version = resolve<nvmlSystemGetCudaDriverVersion_fn>(
        dl, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
    f.device_get_name = resolve<nvmlDeviceGetName_fn>(dl, {"nvmlDeviceGetName"});
    f.device_get_uuid = resolve<nvmlDeviceGetUUID_fn>(dl, {"nvmlDeviceGetUUID"});
    f.device_get_pci_info =
        resolve<nvmlDeviceGetPciInfo_fn>(dl, {"nvmlDeviceGetPciInfo_v3"});  // older symbols use a smaller struct
    f.device_get_architecture = resolve<nvmlDeviceGetArchitecture_fn>(dl, {"nvmlDeviceGetArchitecture"});
    f.device_get_total_energy_consumption =
        resolve<nvmlDeviceGetTotalEnergyConsumption_fn>(dl, {"nvmlDeviceGetTotalEnergyConsumption"});
    f.device_get_power_usage = resolve<nvmlDeviceGetPowerUsage_fn>(dl, {"nvmlDeviceGetPowerUsage"});
    f.device_get_field_values = resolve<nvmlDeviceGetFieldValues_fn>(dl, {"nvmlDeviceGetFieldValues"});
    f.device_get_temperature = resolve<nvmlDeviceGetTemperature_fn>(dl, {"nvmlDeviceGetTemperature"});
    f.device_get_clock_info = resolve<nvmlDeviceGetClockInfo_fn>(dl, {"nvmlDeviceGetClockInfo"});
    // Only _v3 writes nvmlProcessInfo_v2_t; the older symbols use smaller structs.
    f.device_get_compute_running_processes =
        resolve<nvmlDeviceGetComputeRunningProcesses_fn>(dl, {"nvmlDeviceGetComputeRunningProcesses_v3"});
    f.device_get_process_utilization =
        resolve<nvmlDeviceGetProcessUtilization_fn>(dl, {"nvmlDeviceGetProcessUtilization"});
    f.device_get_power_management_limit =
        resolve<nvmlDeviceGetPowerManagementLimit_fn>(dl, {"nvmlDeviceGetPowerManagementLimit"});
    f.device_get_power_management_limit_constraints = resolve<nvmlDeviceGetPowerManagementLimitConstraints_fn>(
        dl, {"nvmlDeviceGetPowerManagementLimitConstraints"});
    f.device_get_power_management_default_limit =
        resolve<nvmlDeviceGetPowerManagementDefaultLimit_fn>(dl, {"nvmlDeviceGetPowerManagementDefaultLimit"});
    f.device_set_power_management_limit =
        resolve<nvmlDeviceSetPowerManagementLimit_fn>(dl, {"nvmlDeviceSetPowerManagementLimit"});
    f.device_get_supported_memory_clocks =
        resolve<nvmlDeviceGetSupportedMemoryClocks_fn>(dl, {"nvmlDeviceGetSupportedMemoryClocks"});
    f.device_get_supported_graphics_clocks =
        resolve<nvmlDeviceGetSupportedGraphicsClocks_fn>(dl, {"nvmlDeviceGetSupportedGraphicsClocks"});
    f.device_set_gpu_locked_clocks = resolve<nvmlDeviceSetGpuLockedClocks_fn>(dl, {"nvmlDeviceSetGpuLockedClocks"});
    f.device_reset_gpu_locked_clocks =
        resolve<nvmlDeviceResetGpuLockedClocks_fn>(dl, {"nvmlDeviceResetGpuLockedClocks"});
    f.device_set_memory_locked_clocks =
        resolve<nvmlDeviceSetMemoryLockedClocks_fn>(dl, {"nvmlDeviceSetMemoryLockedClocks"});
    f.device_reset_memory_locked_clocks =
        resolve<nvmlDeviceResetMemoryLockedClocks_fn>(dl, {"nvmlDeviceResetMemoryLockedClocks"});
    f.device_get_persistence_mode = resolve<nvmlDeviceGetPersistenceMode_fn>(dl, {"nvmlDeviceGetPersistenceMode"});
    f.device_set_persistence_mode = resolve<nvmlDeviceSetPersistenceMode_fn>(dl, {"nvmlDeviceSetPersistenceMode"});

    const nvmlReturn_t rc = f.init();
    if (rc != NVML_SUCCESS) {
        Error failed = lib->error(rc, fmt::format("nvmlInit failed ({})", lib->path_));
        // NVML has only a code; the simulator also says why (a bad ZEUS_SIM_CONFIG, an unusable state file).
        using LastErrorFn = const char* (*)();
        if (auto last_error = resolve<LastErrorFn>(dl, {"zeusSimLastError"})) {
            const char* why = last_error();
            if (why != nullptr && why[0] != '\0') {
                failed.message += fmt::format(": {}", why);
                failed.hint = "fix what the simulator names (ZEUS_SIM_CONFIG, ZEUS_SIM_STATE), then run again";
            }
        }
        return failed;
    }
    lib->initialized_ = true;
    return lib;
}

Library::~Library() {
    if (initialized_ && fn_.shutdown != nullptr) fn_.shutdown();
}

std::string Library::error_string(nvmlReturn_t code) const {
    const char* s = fn_.error_string != nullptr ? fn_.error_string(code) : nullptr;
    if (s == nullptr || s[0] == '\0') return fmt::format("NVML error {}", static_cast<int>(code));
    return s;
}

Error Library::error(nvmlReturn_t code, const std::string& what) const {
    return Error{to_error_code(code), fmt::format("{}: {}", what, error_string(code)), hint_for(code),
                 static_cast<int>(code)};
}

Error Library::missing_function(const char* name) {
    return Error{ErrorCode::FunctionNotFound,
                 fmt::format("this NVML library does not export {}", name),
                 "the NVIDIA driver is too old for this feature; update it", 0};
}

}  // namespace zeus::nvml
