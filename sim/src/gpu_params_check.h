// Sanity check of GpuParams read back from a state file. The configuration
// parser enforces the same bounds; this guards the physics against a damaged
// or foreign file, where e.g. a zero sensor period would make the tick loops
// spin forever.
#pragma once

#include "gpu_params.h"

namespace zeus::sim {

// nullptr if the parameters are safe to simulate, else what is wrong.
const char* invalid_gpu_params_reason(const GpuParams& params);

}  // namespace zeus::sim
