// AMD GPUs through AMD SMI (libamd_smi.so, ROCm 6.2 or newer), loaded at run
// time with dlopen: the same Gpu interface and Gpus set as NVML's. See
// docs/amd.md for the library search order, HIP_VISIBLE_DEVICES and the
// energy-counter validation done when the GPUs are opened.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/counter_accumulator.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::amd {

struct AmdOpenOptions {
    // How long the energy counter is watched at open, against the power
    // integrated over the same time (the original Zeus uses 0.5 s). Every GPU
    // is validated in the same window, so opening costs this once.
    std::chrono::milliseconds validation_window{500};
};

// The AMD GPUs visible to this process (HIP_VISIBLE_DEVICES, else
// CUDA_VISIBLE_DEVICES, in HIP's numbering). Never throws for device
// problems: a missing library or driver is an empty set whose status() says
// why, and a GPU that fails keeps its index as an unavailable GPU.
// backend_info().backend is "amdsmi".
[[nodiscard]] Gpus open_gpus(const GpuOptions& options, const AmdOpenOptions& amd_options = {});

// Where open_gpus() looks for libamd_smi, in order: GpuOptions::amdsmi_library
// alone when set; else libamd_smi.so.{26,25,24} and libamd_smi.so in
// $AMDSMI_LIB_DIR, else in $ROCM_PATH/lib, else in /opt/rocm/lib and the
// newest /opt/rocm-*/lib followed by the loader's own search path.
[[nodiscard]] std::vector<std::string> library_candidates(const GpuOptions& options);

// The accumulation statistics (resets, glitches...) of an AMD GPU's energy
// counter; nullopt for other GPUs or when the counter is disabled.
[[nodiscard]] std::optional<CounterStats> energy_counter_stats(const Gpu& gpu);

}  // namespace zeus::amd
