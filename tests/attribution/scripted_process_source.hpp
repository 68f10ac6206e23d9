// A ProcessSource scripted by the test: per GPU, the running processes and a
// driver buffer of utilization samples answered as NVML does (only samples
// newer than last_seen; NOT_FOUND when none is newer), with errors to inject
// and every last_seen asked for recorded.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "zeus/attribution/engine.hpp"

namespace zeus::attribution::testing {

class ScriptedProcessSource : public ProcessSource {
  public:
    std::map<std::size_t, std::vector<GpuProcess>> running;
    std::map<std::size_t, std::vector<ProcessUtilizationSample>> buffer;
    std::optional<Error> running_error;
    std::optional<Error> utilization_error;
    std::vector<std::uint64_t> last_seen_asked;

    Result<std::vector<GpuProcess>> running_processes(std::size_t gpu) override {
        if (running_error) return *running_error;
        return running[gpu];
    }

    Result<ProcessUtilizationSamples> process_utilization(std::size_t gpu, std::uint64_t last_seen_us) override {
        last_seen_asked.push_back(last_seen_us);
        if (utilization_error) return *utilization_error;
        ProcessUtilizationSamples out{{}, last_seen_us};
        for (const ProcessUtilizationSample& sample : buffer[gpu]) {
            if (sample.timestamp_us <= last_seen_us) continue;
            out.samples.push_back(sample);
            out.last_seen_us = std::max(out.last_seen_us, sample.timestamp_us);
        }
        if (out.samples.empty()) return Error{ErrorCode::NotFound, "no sample newer than last seen", {}};
        return out;
    }
};

}  // namespace zeus::attribution::testing
