#include "zeus/device/gpu_processes.hpp"

#include "zeus/device/gpu.hpp"

namespace zeus {
namespace {

Error no_process_data(const Gpu& gpu) {
    return Error{ErrorCode::NotSupported,
                 "GPU " + std::to_string(gpu.identity().index) + ": its backend has no per-process data",
                 "per-process data needs the NVML backend (NVIDIA driver 450 or newer)", 0};
}

}  // namespace

const GpuProcessQuery* process_query(const Gpu& gpu) { return dynamic_cast<const GpuProcessQuery*>(&gpu); }

Result<std::vector<GpuProcess>> running_compute_processes(const Gpu& gpu) {
    if (const auto* query = process_query(gpu)) return query->running_compute_processes();
    return no_process_data(gpu);
}

Result<ProcessUtilizationSamples> process_utilization(const Gpu& gpu, std::uint64_t last_seen_us) {
    if (const auto* query = process_query(gpu)) return query->process_utilization(last_seen_us);
    return no_process_data(gpu);
}

}  // namespace zeus
