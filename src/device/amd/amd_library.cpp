#include "device/amd/amd_library.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

namespace zeus::amd {
namespace {

constexpr const char* kInstallHint =
    "install ROCm 6.2 or newer (package amd-smi-lib), or point ZEUS_AMDSMI_LIBRARY at libamd_smi.so "
    "(AMDSMI_LIB_DIR and ROCM_PATH are also honoured); see docs/amd.md";

// The ABI number from the soname (libamd_smi.so.26 -> 26), following symlinks.
unsigned abi_from_file_name(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::canonical(path, ec);
    const std::string name = ec ? std::filesystem::path(path).filename().string() : p.filename().string();
    const std::string marker = ".so.";
    const auto at = name.find(marker);
    if (at == std::string::npos) return 0;
    unsigned value = 0;
    bool any = false;
    for (std::size_t i = at + marker.size(); i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
        value = value * 10 + static_cast<unsigned>(name[i] - '0');
        any = true;
        if (value > 1000) return 0;
    }
    return any ? value : 0;
}

struct LoadedLibrary {
    DynamicLibrary library;
    std::string path;
};

// The first candidate that loads.
Result<LoadedLibrary> load_first(const std::vector<std::string>& candidates) {
    std::string failures;
    for (const auto& candidate : candidates) {
        auto attempt = DynamicLibrary::open(candidate);
        if (attempt) return LoadedLibrary{std::move(attempt).value(), candidate};
        if (candidates.size() == 1) failures = attempt.error().message;
    }
    std::string looked;
    for (const auto& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
    return Error{ErrorCode::LibraryNotFound,
                 candidates.size() == 1 ? fmt::format("AMD SMI could not be loaded: {}", failures)
                                        : fmt::format("AMD SMI (libamd_smi) was not found (tried {})", looked),
                 kInstallHint, 0};
}

// The functions every AMD SMI has; without one of them this is not AMD SMI.
Status resolve_required_functions(const DynamicLibrary& dl, const std::string& path, Functions& f) {
    f.init = dl.function<amdsmi_init_fn>("amdsmi_init");
    f.shut_down = dl.function<amdsmi_shut_down_fn>("amdsmi_shut_down");
    f.get_socket_handles = dl.function<amdsmi_get_socket_handles_fn>("amdsmi_get_socket_handles");
    f.get_processor_handles = dl.function<amdsmi_get_processor_handles_fn>("amdsmi_get_processor_handles");
    for (auto [ptr, name] : {std::pair<void*, const char*>{reinterpret_cast<void*>(f.init), "amdsmi_init"},
                             {reinterpret_cast<void*>(f.shut_down), "amdsmi_shut_down"},
                             {reinterpret_cast<void*>(f.get_socket_handles), "amdsmi_get_socket_handles"},
                             {reinterpret_cast<void*>(f.get_processor_handles), "amdsmi_get_processor_handles"}}) {
        if (ptr == nullptr) {
            return Error{ErrorCode::FunctionNotFound,
                         fmt::format("{} does not export {}, which every AMD SMI has", path, name),
                         "ZEUS_AMDSMI_LIBRARY probably names something that is not libamd_smi", 0};
        }
    }
    return {};
}

// Functions that older versions lack: null until a feature needs them (Library::missing_function).
void resolve_optional_functions(const DynamicLibrary& dl, Functions& f) {
    f.status_code_to_string = dl.function<amdsmi_status_code_to_string_fn>("amdsmi_status_code_to_string");
    f.get_lib_version = dl.function<amdsmi_get_lib_version_fn>("amdsmi_get_lib_version");
    f.get_gpu_asic_info = dl.function<amdsmi_get_gpu_asic_info_fn>("amdsmi_get_gpu_asic_info");
    f.get_gpu_device_uuid = dl.function<amdsmi_get_gpu_device_uuid_fn>("amdsmi_get_gpu_device_uuid");
    f.get_gpu_device_bdf = dl.function<amdsmi_get_gpu_device_bdf_fn>("amdsmi_get_gpu_device_bdf");
    f.get_gpu_enumeration_info = dl.function<amdsmi_get_gpu_enumeration_info_fn>("amdsmi_get_gpu_enumeration_info");
    f.get_gpu_kfd_info = dl.function<amdsmi_get_gpu_kfd_info_fn>("amdsmi_get_gpu_kfd_info");
    f.get_energy_count = dl.function<amdsmi_get_energy_count_fn>("amdsmi_get_energy_count");
    f.get_power_info = dl.function<amdsmi_get_power_info_fn>("amdsmi_get_power_info");
    f.get_power_cap_info = dl.function<amdsmi_get_power_cap_info_fn>("amdsmi_get_power_cap_info");
    f.set_power_cap = dl.function<amdsmi_set_power_cap_fn>("amdsmi_set_power_cap");
    f.get_clock_info = dl.function<amdsmi_get_clock_info_fn>("amdsmi_get_clock_info");
    f.set_gpu_clk_range = dl.function<amdsmi_set_gpu_clk_range_fn>("amdsmi_set_gpu_clk_range");
    f.set_gpu_clk_limit = dl.function<amdsmi_set_gpu_clk_limit_fn>("amdsmi_set_gpu_clk_limit");
    f.get_temp_metric = dl.function<amdsmi_get_temp_metric_fn>("amdsmi_get_temp_metric");
    f.set_gpu_perf_level = dl.function<amdsmi_set_gpu_perf_level_fn>("amdsmi_set_gpu_perf_level");
}

// The ABI decides where power fields are: the version's first field, else
// the soname; 0 when neither tells. Asked before amdsmi_init so that an
// unusable library is not initialised.
unsigned detect_abi(const Functions& f, const DynamicLibrary& dl) {
    unsigned abi = 0;
    if (f.get_lib_version != nullptr) {
        std::array<unsigned char, ZEUS_AMDSMI_OUT_BUFFER_SIZE> version{};
        if (f.get_lib_version(version.data()) == AMDSMI_STATUS_SUCCESS) {
            std::uint32_t first = 0;
            std::memcpy(&first, version.data() + ZEUS_AMDSMI_VERSION_ABI_OFFSET, sizeof first);
            abi = first;
        }
    }
    if (abi == 0 || abi > 1000) abi = abi_from_file_name(dl.resolved_path());
    return abi;
}

// An ABI older than Zeus supports is refused; a newer one only warns.
Status check_abi(unsigned abi, const std::string& path, std::vector<std::string>& warnings) {
    if (abi == 0) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("cannot tell which AMD SMI version {} is (no amdsmi_get_lib_version and no "
                                 "version in the file name)",
                                 path),
                     kInstallHint, 0};
    }
    if (abi < kOldestAbi) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("{} is AMD SMI {}, older than the {} (ROCm 6.2) Zeus needs", path, abi, kOldestAbi),
                     "update ROCm to 6.3 or newer", 0};
    }
    if (abi > kNewestKnownAbi) {
        warnings.push_back(fmt::format(
            "AMD SMI {} is newer than the versions Zeus was written against ({}-{}); readings assume the layout of {}",
            abi, kOldestAbi, kNewestKnownAbi, kNewestKnownAbi));
    }
    return {};
}

}  // namespace

ErrorCode to_error_code(amdsmi_status_t status) {
    switch (status) {
        case AMDSMI_STATUS_INVAL:
        case AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS:
        case AMDSMI_STATUS_ARG_PTR_NULL: return ErrorCode::InvalidArgument;
        case AMDSMI_STATUS_NOT_SUPPORTED:
        case AMDSMI_STATUS_NOT_YET_IMPLEMENTED:
        case AMDSMI_STATUS_NO_HSMP_SUP:
        case AMDSMI_STATUS_NO_HSMP_MSG_SUP:
        case AMDSMI_STATUS_SETTING_UNAVAILABLE:
        case AMDSMI_STATUS_NON_AMD_CPU: return ErrorCode::NotSupported;
        case AMDSMI_STATUS_FAIL_LOAD_MODULE:
        case AMDSMI_STATUS_FILE_NOT_FOUND: return ErrorCode::LibraryNotFound;
        case AMDSMI_STATUS_FAIL_LOAD_SYMBOL: return ErrorCode::FunctionNotFound;
        case AMDSMI_STATUS_DRM_ERROR:
        case AMDSMI_STATUS_IO:
        case AMDSMI_STATUS_FILE_ERROR: return ErrorCode::OperatingSystem;
        case AMDSMI_STATUS_TIMEOUT:
        case AMDSMI_STATUS_HSMP_TIMEOUT: return ErrorCode::Timeout;
        case AMDSMI_STATUS_RETRY:
        case AMDSMI_STATUS_INTERRUPT: return ErrorCode::NotReady;
        case AMDSMI_STATUS_NO_PERM: return ErrorCode::NoPermission;
        case AMDSMI_STATUS_ADDRESS_FAULT:
        case AMDSMI_STATUS_OUT_OF_RESOURCES:
        case AMDSMI_STATUS_NO_SLOT: return ErrorCode::Memory;
        case AMDSMI_STATUS_INIT_ERROR:
        case AMDSMI_STATUS_NOT_INIT: return ErrorCode::Uninitialized;
        case AMDSMI_STATUS_BUSY: return ErrorCode::InUse;
        case AMDSMI_STATUS_NOT_FOUND: return ErrorCode::NotFound;
        case AMDSMI_STATUS_DRIVER_NOT_LOADED:
        case AMDSMI_STATUS_NO_ENERGY_DRV:
        case AMDSMI_STATUS_NO_MSR_DRV:
        case AMDSMI_STATUS_NO_HSMP_DRV:
        case AMDSMI_STATUS_NO_DRV: return ErrorCode::DriverNotLoaded;
        case AMDSMI_STATUS_NO_DATA: return ErrorCode::NoData;
        case AMDSMI_STATUS_INSUFFICIENT_SIZE: return ErrorCode::InsufficientSize;
        case AMDSMI_STATUS_AMDGPU_RESTART_ERR: return ErrorCode::ResetRequired;
        case AMDSMI_STATUS_CORRUPTED_EEPROM: return ErrorCode::CorruptedInfoRom;
        default: return ErrorCode::Unknown;
    }
}

std::string hint_for(amdsmi_status_t status) {
    switch (status) {
        case AMDSMI_STATUS_NO_PERM:
            return "changing AMD GPU settings needs root (it writes the amdgpu sysfs files); run as root or "
                   "through zeusd";
        case AMDSMI_STATUS_DRIVER_NOT_LOADED:
        case AMDSMI_STATUS_NO_DRV:
            return "the amdgpu kernel driver is not loaded; check `lsmod | grep amdgpu` and `amd-smi list`";
        case AMDSMI_STATUS_NO_ENERGY_DRV: return "the kernel's energy driver is not loaded";
        case AMDSMI_STATUS_INIT_ERROR:
        case AMDSMI_STATUS_NOT_INIT:
        case AMDSMI_STATUS_DRM_ERROR:
            return "check that this user can open /dev/kfd and /dev/dri/renderD* (groups `render` and `video`) "
                   "and that `amd-smi list` works";
        case AMDSMI_STATUS_AMDGPU_RESTART_ERR: return "the amdgpu driver needs a restart; see `dmesg`";
        case AMDSMI_STATUS_CORRUPTED_EEPROM: return "the board's EEPROM is corrupted; contact the vendor";
        case AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS:
        case AMDSMI_STATUS_INVAL: return "use a value inside the range `zeus show-env` prints";
        default: return {};
    }
}

bool definitive_failure(amdsmi_status_t status) {
    switch (status) {
        case AMDSMI_STATUS_TIMEOUT:
        case AMDSMI_STATUS_RETRY:
        case AMDSMI_STATUS_INTERRUPT:
        case AMDSMI_STATUS_BUSY:
        case AMDSMI_STATUS_NO_DATA:
        case AMDSMI_STATUS_HSMP_TIMEOUT:
        case AMDSMI_STATUS_UNKNOWN_ERROR: return false;
        default: return true;
    }
}

Result<std::shared_ptr<Library>> Library::open(const std::vector<std::string>& candidates) {
    auto loaded = load_first(candidates);
    if (!loaded) return loaded.error();
    LoadedLibrary found = std::move(loaded).value();
    std::shared_ptr<Library> lib(new Library(std::move(found.library), found.path));
    const std::string& path = lib->path_;
    const DynamicLibrary& dl = lib->lib_;
    Functions& f = lib->fn_;
    if (auto resolved = resolve_required_functions(dl, path, f); !resolved) return resolved.error();
    resolve_optional_functions(dl, f);
    lib->abi_ = detect_abi(f, dl);
    if (auto supported = check_abi(lib->abi_, path, lib->warnings_); !supported) return supported.error();

    const amdsmi_status_t rc = f.init(AMDSMI_INIT_AMD_GPUS);
    if (rc != AMDSMI_STATUS_SUCCESS) return lib->error(rc, fmt::format("amdsmi_init failed ({})", path));
    lib->initialized_ = true;
    return lib;
}

Library::~Library() {
    if (initialized_ && fn_.shut_down != nullptr) fn_.shut_down();
}

std::string Library::status_string(amdsmi_status_t status) const {
    const char* s = nullptr;
    if (fn_.status_code_to_string != nullptr && fn_.status_code_to_string(status, &s) != AMDSMI_STATUS_SUCCESS) {
        s = nullptr;
    }
    if (s == nullptr || s[0] == '\0') return fmt::format("AMD SMI status {}", status);
    return s;
}

Error Library::error(amdsmi_status_t status, const std::string& what) const {
    return Error{to_error_code(status), fmt::format("{}: {}", what, status_string(status)), hint_for(status),
                 static_cast<int>(status)};
}

Error Library::missing_function(const char* name) {
    return Error{ErrorCode::FunctionNotFound, fmt::format("this AMD SMI library does not export {}", name),
                 "ROCm is too old for this feature; update it", 0};
}

}  // namespace zeus::amd
