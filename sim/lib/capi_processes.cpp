// The zeusSim* process calls (sim/src/processes.h has the model).
#include "capi_support.h"

using namespace zeus::sim;
using namespace zeus::sim::capi;

extern "C" {

zeusSimStatus_t zeusSimProcessLoadBegin(unsigned gpu, double utilization, int pid, double power_weight, int* load_id) {
  return api_call([&] {
    require(load_id, "load_id");
    *load_id = open_simulator()->begin_process_load(gpu, utilization, pid, power_weight);
  });
}

zeusSimStatus_t zeusSimSetSharing(unsigned gpu, const char* mode) {
  return api_call([&] {
    require(mode, "mode");
    open_simulator()->set_sharing(gpu, mode);
  });
}

zeusSimStatus_t zeusSimProcessEnergy(unsigned gpu, int pid, double* joules) {
  return api_call([&] {
    require(joules, "joules");
    *joules = open_simulator()->process_energy_j(gpu, pid);
  });
}

}  // extern "C"
