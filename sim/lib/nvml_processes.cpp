// NVML's process calls over the simulated processes (sim/src/processes.h):
// the compute processes with a load on the GPU, and their utilization
// samples, with NVML's sizing conventions.
#include <algorithm>

#include "nvml_common.h"
#include "nvml_functions.h"
#include "processes.h"

using namespace zeus::sim;
using namespace zeus::sim::nvml;

namespace {

// No memory model: the driver's "not available"; MIG off.
nvmlProcessInfo_t process_info_v2(std::int32_t pid) {
  return nvmlProcessInfo_t{static_cast<unsigned>(pid), NVML_VALUE_NOT_AVAILABLE_ULL, 0xFFFFFFFFu, 0xFFFFFFFFu};
}

// NVML's sizing: the count is always written; no process is SUCCESS even
// without a buffer, too small a buffer INSUFFICIENT_SIZE.
template <typename Info, typename Make>
nvmlReturn_t running_processes_call(nvmlDevice_t device, unsigned int* infoCount, Info* infos, Make make) {
  if (!infoCount) return NVML_ERROR_INVALID_ARGUMENT;
  return device_state_call(DriverCall::kQuery, device, [&](Simulator&, SharedState& s, unsigned gpu, double) {
    const std::vector<std::int32_t> pids = running_processes(s, gpu);
    const unsigned room = *infoCount;
    *infoCount = static_cast<unsigned>(pids.size());
    if (pids.empty()) return NVML_SUCCESS;
    if (!infos || room < pids.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (std::size_t i = 0; i < pids.size(); ++i) infos[i] = make(pids[i]);
    return NVML_SUCCESS;
  });
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                  zeusSimNvmlProcessInfoV1_t* infos) {
  return running_processes_call(device, infoCount, infos, [](std::int32_t pid) {
    return zeusSimNvmlProcessInfoV1_t{static_cast<unsigned>(pid), NVML_VALUE_NOT_AVAILABLE_ULL};
  });
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return running_processes_call(device, infoCount, infos, process_info_v2);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return running_processes_call(device, infoCount, infos, process_info_v2);
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp) {
  if (!processSamplesCount) return NVML_ERROR_INVALID_ARGUMENT;
  return device_state_call(DriverCall::kQuery, device, [&](Simulator&, SharedState& s, unsigned gpu, double) {
    const auto last_seen = static_cast<std::int64_t>(std::min<unsigned long long>(lastSeenTimeStamp, INT64_MAX));
    const std::vector<UtilSample> samples = utilization_samples(s, gpu, last_seen);
    const unsigned room = *processSamplesCount;
    *processSamplesCount = static_cast<unsigned>(samples.size());
    if (samples.empty()) return NVML_ERROR_NOT_FOUND;
    if (!utilization || room < samples.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      utilization[i] = nvmlProcessUtilizationSample_t{static_cast<unsigned>(samples[i].pid),
                                                      static_cast<unsigned long long>(samples[i].unix_us),
                                                      samples[i].sm_util,
                                                      0,
                                                      0,
                                                      0};
    }
    return NVML_SUCCESS;
  });
}

}  // extern "C"
