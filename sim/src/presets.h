// Built-in GPU models. A preset fills every GpuParams field except the
// per-board identity (UUID, serial, PCI address), which depends on the seed and
// the GPU's index; the config can override any preset value.
#pragma once

#include <cstddef>
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

// What tools choosing a preset need without creating a GPU.
struct PresetSummary {
  const char* key;
  const char* name;
  const char* trace_names;  // "rtx6000,quadrortx6000": names in summary_power_<name>.csv
  double limit_min_w, limit_max_w, limit_default_w;
  bool energy_counter;
};
std::size_t preset_count();
std::optional<PresetSummary> preset_summary(std::size_t index);

// Regenerates the descending supported-clock list from max down to min in steps.
void fill_graphics_clocks(GpuParams& params, double step_mhz);

// Deterministic UUID, serial and PCI address for GPU `index` under `seed`.
void assign_identity(GpuParams& params, std::uint64_t seed, unsigned index);

}  // namespace zeus::sim
