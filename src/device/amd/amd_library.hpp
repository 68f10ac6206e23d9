// libamd_smi opened with dlopen, its functions resolved once, AMD SMI
// initialised (AMD GPUs only) once per Library and shut down when the last
// user (every AmdGpu holds a shared_ptr) is gone. Not a global. Every call
// into the library is serialised by one mutex: libamd_smi was not thread-safe
// before ROCm 7.2, and the cost is negligible next to a sysfs read.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/amd/amdsmi_abi.h"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::amd {

struct Functions {
    // Required.
    amdsmi_init_fn init = nullptr;
    amdsmi_shut_down_fn shut_down = nullptr;
    amdsmi_get_socket_handles_fn get_socket_handles = nullptr;
    amdsmi_get_processor_handles_fn get_processor_handles = nullptr;
    // Optional: a missing one makes that feature FunctionNotFound / NotSupported.
    amdsmi_status_code_to_string_fn status_code_to_string = nullptr;
    amdsmi_get_lib_version_fn get_lib_version = nullptr;
    amdsmi_get_gpu_asic_info_fn get_gpu_asic_info = nullptr;
    amdsmi_get_gpu_device_uuid_fn get_gpu_device_uuid = nullptr;
    amdsmi_get_gpu_device_bdf_fn get_gpu_device_bdf = nullptr;
    amdsmi_get_gpu_enumeration_info_fn get_gpu_enumeration_info = nullptr;
    amdsmi_get_gpu_kfd_info_fn get_gpu_kfd_info = nullptr;
    amdsmi_get_energy_count_fn get_energy_count = nullptr;
    amdsmi_get_power_info_fn get_power_info = nullptr;
    amdsmi_get_power_cap_info_fn get_power_cap_info = nullptr;
    amdsmi_set_power_cap_fn set_power_cap = nullptr;
    amdsmi_get_clock_info_fn get_clock_info = nullptr;
    amdsmi_set_gpu_clk_range_fn set_gpu_clk_range = nullptr;
    amdsmi_set_gpu_clk_limit_fn set_gpu_clk_limit = nullptr;
    amdsmi_get_temp_metric_fn get_temp_metric = nullptr;
    amdsmi_set_gpu_perf_level_fn set_gpu_perf_level = nullptr;
};

// The oldest and newest library ABIs whose layouts amdsmi_abi.h follows.
inline constexpr unsigned kOldestAbi = 24;
inline constexpr unsigned kNewestKnownAbi = 26;

class Library {
  public:
    // Tries each candidate in order; the first that loads is used (a later
    // failure, e.g. amdsmi_init, is reported, not hidden by trying others).
    static Result<std::shared_ptr<Library>> open(const std::vector<std::string>& candidates);

    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library();

    [[nodiscard]] const Functions& fn() const { return fn_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] unsigned abi() const { return abi_; }
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
    // Held around every call into the library.
    [[nodiscard]] std::unique_lock<std::mutex> lock() const { return std::unique_lock(mutex_); }

    // AMD SMI's own words for `status`.
    [[nodiscard]] std::string status_string(amdsmi_status_t status) const;
    // "<what>: <AMD SMI's message>" with a typed code and a hint.
    [[nodiscard]] Error error(amdsmi_status_t status, const std::string& what) const;
    [[nodiscard]] static Error missing_function(const char* name);

  private:
    Library(DynamicLibrary lib, std::string path) : lib_(std::move(lib)), path_(std::move(path)) {}
    DynamicLibrary lib_;
    std::string path_;
    Functions fn_;
    unsigned abi_ = 0;
    std::vector<std::string> warnings_;
    bool initialized_ = false;
    mutable std::mutex mutex_;
};

[[nodiscard]] ErrorCode to_error_code(amdsmi_status_t status);
[[nodiscard]] std::string hint_for(amdsmi_status_t status);
// False for failures that may pass (timeout, busy, retry...).
[[nodiscard]] bool definitive_failure(amdsmi_status_t status);

}  // namespace zeus::amd
