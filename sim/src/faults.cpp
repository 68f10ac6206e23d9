#include "faults.h"

#include <cmath>

#include "errors.h"

namespace zeus::sim {

std::string known_fault_names() {
  return "counter_reset, stuck_counter, power_spike, lost, energy_not_supported, set_temperature, clear";
}

void inject_fault(GpuState& gpu, std::string_view name, double value, double now) {
  GpuDynamics& d = gpu.dyn;
  if (!std::isfinite(value)) throw SimError(Status::kInvalidArgument, "fault value must be a finite number");
  if (name == "counter_reset") {
    // As after a driver reload: the counter restarts from 0 now.
    d.energy_offset_mj = -static_cast<std::int64_t>(std::floor(d.energy_j * 1000.0));
    d.energy_counter_mj = 0;
    d.energy_refreshed_s = now;
  } else if (name == "stuck_counter") {
    d.counter_stuck = value != 0;
  } else if (name == "power_spike") {
    d.pending_spike_w += value;
  } else if (name == "lost") {
    d.lost = value != 0;
  } else if (name == "energy_not_supported") {
    d.energy_disabled = value != 0;
  } else if (name == "set_temperature") {
    if (value < -50 || value > 200) {
      throw SimError(Status::kInvalidArgument, "set_temperature needs a value in [-50, 200] degrees C");
    }
    d.temperature_c = value;
  } else if (name == "clear") {
    d.counter_stuck = false;
    d.lost = false;
    d.energy_disabled = gpu.params.fault_energy_not_supported;
    d.pending_spike_w = 0;
  } else {
    throw SimError(Status::kInvalidArgument,
                   "unknown fault \"" + std::string(name) + "\" (known: " + known_fault_names() + ")");
  }
}

}  // namespace zeus::sim
