// Sampled window edges of CPU packages (RAPL) and the SoC: each edge is the
// watcher's latest reading (monitor/edge_sampler.hpp) extrapolated to the
// edge with the power since the reading before it, so that neither edge
// reads a device on the caller's thread. The values are computed from the
// two edges' frames alone, when a result is first read.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "monitor/edge_sampler.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/monitor/measurement.hpp"

namespace zeus::monitor_detail {

// The packages the watcher reads, fixed when the monitor opens; positions
// follow the frames' `cpus`.
struct SampledPackages {
    std::vector<unsigned> indices;  // CPU indices
    std::vector<CpuPowerCeiling> ceilings;
    std::vector<bool> has_dram;
};

// What a sampled window's CPU, DRAM and SoC values come from.
struct HostWindow {
    std::shared_ptr<const SampledPackages> packages;
    std::shared_ptr<const EdgeSampler::Frame> begin_frame;
    std::shared_ptr<const EdgeSampler::Frame> end_frame;
    Timestamp start;
    Timestamp end;
};

// A reading of `at_read` J taken `age` before an edge, moved to the edge with
// `power` (nullopt: 0 W). In that time the device drew anything from 0 W to
// `ceiling`, which bounds the error: max(P, ceiling − P) × age.
struct Extrapolated {
    Joules energy{0.0};
    Joules error_bound{0.0};
};
[[nodiscard]] Extrapolated extrapolate(Joules at_read, std::optional<Watts> power, Watts ceiling, Seconds age);

// Each package's energy (package = true) or its DRAM's (false), by CPU index.
// A package whose read failed at an edge is lost, with the reason.
[[nodiscard]] std::map<unsigned, EnergyValue> sampled_package_values(const HostWindow& window, bool package);

// Each SoC metric's energy, by metric name ("cpu", "gpu", "total"); none
// when the SoC could not be read at an edge, as at a synchronous edge.
[[nodiscard]] std::map<std::string, EnergyValue> sampled_soc_values(const HostWindow& window);

}  // namespace zeus::monitor_detail
