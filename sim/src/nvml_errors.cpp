#include "nvml_errors.h"

#include <cctype>
#include <string>

#include "device/nvml/nvml_abi.h"

namespace zeus::sim {
namespace {

struct ErrorInfo {
  int code;
  const char* name;     // enum name without the NVML_ERROR_ prefix
  const char* message;  // nvmlErrorString wording
};

// Wording as in NVIDIA's own bindings (nvidia-ml-py's _errcode_to_string).
constexpr ErrorInfo kErrors[] = {
    {NVML_SUCCESS, "SUCCESS", "Success"},
    {NVML_ERROR_UNINITIALIZED, "UNINITIALIZED", "Uninitialized"},
    {NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT", "Invalid Argument"},
    {NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", "Not Supported"},
    {NVML_ERROR_NO_PERMISSION, "NO_PERMISSION", "Insufficient Permissions"},
    {NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED", "Already Initialized"},
    {NVML_ERROR_NOT_FOUND, "NOT_FOUND", "Not Found"},
    {NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", "Insufficient Size"},
    {NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER", "Insufficient External Power"},
    {NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {NVML_ERROR_TIMEOUT, "TIMEOUT", "Timeout"},
    {NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE", "Interrupt Request Issue"},
    {NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND", "Function Not Found"},
    {NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM", "Corrupted infoROM"},
    {NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST", "GPU is lost"},
    {NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED", "GPU requires restart"},
    {NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM", "The operating system has blocked the request."},
    {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH",
     "RM has detected an NVML/RM version mismatch."},
    {NVML_ERROR_IN_USE, "IN_USE", "The GPU is currently in use"},
    {NVML_ERROR_MEMORY, "MEMORY", "Insufficient Memory"},
    {NVML_ERROR_NO_DATA, "NO_DATA", "No data"},
    {NVML_ERROR_VGPU_ECC_NOT_ENABLED, "VGPU_ECC_NOT_ENABLED",
     "The requested vgpu operation is not available on target device, becasue ECC is enabled"},
    {NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES", "Ran out of critical resources, other than memory"},
    {NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED", "The requested frequency is not supported"},
    {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    {NVML_ERROR_DEPRECATED, "DEPRECATED", "Deprecated"},
    {NVML_ERROR_NOT_READY, "NOT_READY", "Not Ready"},
    {NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND", "GPU Not Found"},
    {NVML_ERROR_INVALID_STATE, "INVALID_STATE", "Invalid State"},
    {NVML_ERROR_UNKNOWN, "UNKNOWN", "Unknown Error"},
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<int> nvml_error_from_name(std::string_view name) {
  std::string key = upper(name);
  constexpr std::string_view kPrefix = "NVML_ERROR_";
  if (key.starts_with(kPrefix)) key.erase(0, kPrefix.size());
  for (const ErrorInfo& e : kErrors) {
    if (key == e.name) return e.code;
  }
  return std::nullopt;
}

const char* nvml_error_string(int code) {
  for (const ErrorInfo& e : kErrors) {
    if (e.code == code) return e.message;
  }
  return "Unknown Error";
}

}  // namespace zeus::sim
