// NVML error codes by name (for the config's "init_error") and the exact wording
// real NVML's nvmlErrorString uses, so clients print the messages users know.
#pragma once

#include <optional>
#include <string_view>

namespace zeus::sim {

// "GPU_IS_LOST", "NVML_ERROR_GPU_IS_LOST" (any case) -> 15.
std::optional<int> nvml_error_from_name(std::string_view name);
const char* nvml_error_string(int code);

}  // namespace zeus::sim
