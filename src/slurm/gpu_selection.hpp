// Which GPUs a job or step was given, from the variables Slurm's gres/gpu
// plugin sets in its environment. Their numbers are the GPUs' indices in
// gres.conf's order, which are NVML's indices (and zeusd's ids) when gres.conf
// lists the GPUs in NVML order, as AutoDetect=nvml and /dev/nvidia[0-N] do.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::slurm {

struct GpuSelection {
    std::vector<unsigned> ids;  // ascending, no repeats; empty: no GPUs
    std::string source;         // the variable they came from; empty when none is set
};

// Looks one variable up in the job's environment; nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view)>;

// SLURM_STEP_GPUS (a step's own GPUs), else SLURM_JOB_GPUS (a batch script's,
// a prolog's), else CUDA_VISIBLE_DEVICES, used only when it holds indices
// (Slurm sets it to the same indices when devices are not constrained by
// cgroups). A value that is not a list of indices is an error naming it.
[[nodiscard]] Result<GpuSelection> select_gpus(const EnvironmentLookup& lookup);

// "0,2,3" → {0, 2, 3}; `variable` names the source in errors.
[[nodiscard]] Result<std::vector<unsigned>> parse_gpu_list(std::string_view variable, std::string_view value);

}  // namespace zeus::slurm
