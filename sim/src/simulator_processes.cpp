// The Simulator's process operations (sim/src/processes.h has the model).
#include <unistd.h>

#include <cmath>
#include <string>

#include "processes.h"
#include "simulator.h"

namespace zeus::sim {

int Simulator::begin_process_load(unsigned gpu, double utilization, std::int32_t pid, double power_weight) {
  if (!(utilization > 0 && utilization <= 1)) throw SimError(Status::kInvalidArgument, "utilization must be in (0, 1]");
  if (pid < 0) throw SimError(Status::kInvalidArgument, "pid must be >= 0 (0: the calling process)");
  if (!(std::isfinite(power_weight) && power_weight > 0 && power_weight <= 10)) {
    throw SimError(Status::kInvalidArgument, "power_weight must be in (0, 10] (1: the GPU's own dynamic power)");
  }
  return with_gpu(gpu, [&](SharedState& s, double now) {
    const int id = add_load_locked(s, gpu, utilization, -1, 0, now);
    for (LoadSlot& load : s.loads) {
      if (!load.in_use || load.id != id) continue;
      if (pid != 0) load.process_pid = pid;
      load.power_weight = power_weight;
    }
    advance_gpu(s, gpu, now);  // the operating point with the new weight
    return id;
  });
}

void Simulator::set_sharing(unsigned gpu, std::string_view mode) {
  Sharing sharing = Sharing::kConcurrent;
  if (mode == "time_sliced") {
    sharing = Sharing::kTimeSliced;
  } else if (mode != "concurrent") {
    throw SimError(Status::kInvalidArgument,
                   "unknown sharing mode '" + std::string(mode) + "'; use 'concurrent' or 'time_sliced'");
  }
  with_gpu(gpu, [&](SharedState& s, double now) {
    s.gpu_processes[gpu].sharing = sharing;
    advance_gpu(s, gpu, now);
    return 0;
  });
}

double Simulator::process_energy_j(unsigned gpu, std::int32_t pid) {
  return with_gpu(gpu, [&](SharedState& s, double) { return sim::process_energy_j(s, gpu, pid); });
}

}  // namespace zeus::sim
