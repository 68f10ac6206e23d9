// What a GPU's driver tells about the processes that use it: the compute
// processes with a context on it, and per-process utilization samples; used
// by the attribution layer to split energy (docs/attribution.md).
//
// An optional capability of a Gpu: a backend that has it also implements
// GpuProcessQuery (NVML does), and running_compute_processes(gpu) /
// process_utilization(gpu, ...) ask any Gpu, answering NotSupported for the
// others. A separate interface rather than more virtuals on Gpu, so that the
// backends and fakes without process data need nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus {

struct GpuProcess {
    std::uint32_t pid = 0;                // host PID (NVML reports the host's PID namespace)
    std::uint64_t used_memory_bytes = 0;  // 0 when the driver does not say
};

// One driver sample: the share of one sampling period (the driver's, 1/6 s to
// 1 s) during which the process had a kernel running on the SMs.
struct ProcessUtilizationSample {
    std::uint32_t pid = 0;
    std::uint64_t timestamp_us = 0;  // CPU time of the sample, µs since 1970
    std::uint32_t sm_util = 0;       // percent
};

struct ProcessUtilizationSamples {
    std::vector<ProcessUtilizationSample> samples;  // newer than the last_seen_us asked for
    // The newest timestamp among the samples, or the one asked for when none
    // is newer: pass it to the next call so that no sample counts twice.
    std::uint64_t last_seen_us = 0;
};

class Gpu;

class GpuProcessQuery {
  public:
    virtual ~GpuProcessQuery() = default;
    // The processes with a compute context on the GPU (host PIDs).
    [[nodiscard]] virtual Result<std::vector<GpuProcess>> running_compute_processes() const = 0;
    // The driver's per-process SM utilization samples newer than last_seen_us
    // (0: all it holds). NotFound when none is newer.
    [[nodiscard]] virtual Result<ProcessUtilizationSamples> process_utilization(std::uint64_t last_seen_us) const = 0;
};

// The Gpu's GpuProcessQuery, or nullptr when its backend has none.
[[nodiscard]] const GpuProcessQuery* process_query(const Gpu& gpu);
[[nodiscard]] Result<std::vector<GpuProcess>> running_compute_processes(const Gpu& gpu);
[[nodiscard]] Result<ProcessUtilizationSamples> process_utilization(const Gpu& gpu, std::uint64_t last_seen_us);

}  // namespace zeus
