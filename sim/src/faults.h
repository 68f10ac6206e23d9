// Faults injected at run time (zeusSimInjectFault, `zeus-sim fault`). Faults
// fixed in the configuration (counter_reset_at_s, stuck_counter_after_s,
// power_spikes, init_error, energy_not_supported) are applied by the sensors
// and the NVML layer; these are their on-demand counterparts.
#pragma once

#include <string>
#include <string_view>

#include "shared_state.h"

namespace zeus::sim {

// Applies fault `name` with `value` to a GPU whose physics is current at `now`.
// Throws SimError(kInvalidArgument) naming the known faults.
void inject_fault(GpuState& gpu, std::string_view name, double value, double now);

std::string known_fault_names();

}  // namespace zeus::sim
