// Built-in GPU models. A preset fills every GpuParams field except the
// per-board identity (UUID, serial, PCI address), which depends on the seed and
// the GPU's index; the config can override any preset value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_params.h"

namespace zeus::sim {

// Accepts the preset key ("A100-SXM4-40GB") or the marketing name
// ("NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-16GB"), case-insensitively.
std::optional<GpuParams> find_preset(std::string_view model);
std::vector<std::string> preset_names();

// Regenerates the descending supported-clock list from max down to min in steps.
void fill_graphics_clocks(GpuParams& params, double step_mhz);

// Deterministic UUID, serial and PCI address for GPU `index` under `seed`.
void assign_identity(GpuParams& params, std::uint64_t seed, unsigned index);

}  // namespace zeus::sim
