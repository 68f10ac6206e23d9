// NvmlGpu's process calls: the compute processes and their utilization
// samples, with NVML's two-call sizing (ask for the count, then fill), retried
// when processes start between the calls.
#include <algorithm>

#include "device/nvml/nvml_gpu.hpp"

namespace zeus::nvml {
namespace {

// Room for processes that start between the sizing call and the filling one.
constexpr unsigned kSlack = 8;
constexpr int kAttempts = 3;

}  // namespace

Result<std::vector<GpuProcess>> NvmlGpu::running_compute_processes() const {
    const auto fn = lib_->fn().device_get_compute_running_processes;
    const char* name = "nvmlDeviceGetComputeRunningProcesses_v3";
    if (fn == nullptr) return Library::missing_function(name);
    unsigned count = 0;
    nvmlReturn_t rc = fn(handle_, &count, nullptr);
    if (rc == NVML_SUCCESS) return std::vector<GpuProcess>{};
    for (int attempt = 0; attempt < kAttempts && rc == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
        std::vector<nvmlProcessInfo_t> infos(count + kSlack);
        count = static_cast<unsigned>(infos.size());
        rc = fn(handle_, &count, infos.data());
        if (rc != NVML_SUCCESS) continue;
        std::vector<GpuProcess> out;
        for (unsigned i = 0; i < std::min<std::size_t>(count, infos.size()); ++i) {
            const auto memory = infos[i].usedGpuMemory;
            out.push_back({infos[i].pid, memory == NVML_VALUE_NOT_AVAILABLE_ULL ? 0 : memory});
        }
        return out;
    }
    return fail(rc, name);
}

Result<ProcessUtilizationSamples> NvmlGpu::process_utilization(std::uint64_t last_seen_us) const {
    const auto fn = lib_->fn().device_get_process_utilization;
    const char* name = "nvmlDeviceGetProcessUtilization";
    if (fn == nullptr) return Library::missing_function(name);
    unsigned count = 0;
    nvmlReturn_t rc = fn(handle_, nullptr, &count, last_seen_us);
    // Drivers answer the sizing call with INSUFFICIENT_SIZE or SUCCESS.
    for (int attempt = 0; attempt < kAttempts && (rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_SUCCESS);
         ++attempt) {
        std::vector<nvmlProcessUtilizationSample_t> samples(count + kSlack);
        count = static_cast<unsigned>(samples.size());
        rc = fn(handle_, samples.data(), &count, last_seen_us);
        if (rc != NVML_SUCCESS) continue;
        ProcessUtilizationSamples out{{}, last_seen_us};
        for (unsigned i = 0; i < std::min<std::size_t>(count, samples.size()); ++i) {
            const auto& sample = samples[i];
            if (sample.timeStamp <= last_seen_us) continue;
            out.samples.push_back({sample.pid, sample.timeStamp, sample.smUtil});
            out.last_seen_us = std::max<std::uint64_t>(out.last_seen_us, sample.timeStamp);
        }
        return out;
    }
    return fail(rc, name);
}

}  // namespace zeus::nvml
