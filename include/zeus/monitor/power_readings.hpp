// Power per device at a moment, for printing every period (`zeus power`,
// `python -m zeus_native.monitor power`): GPU power from a PowerMonitor's
// latest samples, CPU package power as the energy difference since the
// previous reading.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "zeus/device/cpu.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus {

// Average package power of each selected CPU between two samples, from
// Cpu::package_energy() differences.
class CpuPowerSampler {
  public:
    CpuPowerSampler(const Cpus& cpus, std::vector<unsigned> indices);
    // Reads every package now; returns, per selected CPU in order, the
    // average power since the previous call (nullopt on the first call or a
    // failed read).
    std::vector<std::optional<double>> sample(Timestamp now);

  private:
    const Cpus& cpus_;
    std::vector<unsigned> indices_;
    std::vector<std::optional<double>> last_joules_;
    std::optional<Timestamp> last_time_;
};

class PowerReadings {
  public:
    // `power_monitor` may be null (no GPU selected); it and `cpus` must outlive this.
    PowerReadings(const PowerMonitor* power_monitor, std::vector<unsigned> gpu_indices, PowerDomain domain,
                  const Cpus& cpus, std::vector<unsigned> cpu_indices);
    // Starts the CPUs' first period (their first read() has a power).
    void start(Timestamp now);
    // Watts per device, the GPUs then the CPUs in the order given (nullopt:
    // not readable now, e.g. a lost GPU, whose last sample is not repeated);
    // CPUs average over the time since the last call.
    std::vector<std::optional<double>> read(Timestamp now);
    // What changed since the last call, once per change: a GPU whose readings
    // stopped ("GPU 1: no power reading ...") or came back.
    [[nodiscard]] std::vector<std::string> take_warnings();
    // When the CPUs' current period began (the last start() or read()).
    [[nodiscard]] Timestamp last_read() const { return last_read_; }
    [[nodiscard]] std::size_t gpu_count() const { return gpu_indices_.size(); }
    [[nodiscard]] CpuPowerSampler& cpu_sampler() { return cpu_sampler_; }

  private:
    const PowerMonitor* power_monitor_;
    std::vector<unsigned> gpu_indices_;
    PowerDomain domain_;
    CpuPowerSampler cpu_sampler_;
    Timestamp last_read_{};
    std::set<unsigned> stale_;  // GPUs shown as unavailable
    std::vector<std::string> warnings_;
};

}  // namespace zeus
