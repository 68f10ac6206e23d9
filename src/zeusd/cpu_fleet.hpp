// The CPU packages the daemon serves, by RAPL package index. Counters go
// through the library's accumulators (wraps caught by its sampler thread,
// whose period follows from the counter's range), so the totals never jump
// back and have no 30-second blind spot like the original's keep-alive.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "zeus/device/cpu.hpp"

namespace zeus::zeusd {

struct CpuInfo {
    unsigned id = 0;
    bool dram_available = false;
};

struct CpuEnergyReading {
    std::optional<std::uint64_t> cpu_uj;
    std::optional<std::uint64_t> dram_uj;  // nullopt: not asked for, or no DRAM zone
};

struct CpuPowerReading {
    std::uint32_t cpu_mw = 0;
    std::optional<std::uint32_t> dram_mw;
};

class CpuFleet {
  public:
    explicit CpuFleet(Cpus cpus);

    [[nodiscard]] std::size_t size() const { return cpus_.size(); }
    [[nodiscard]] const std::vector<CpuInfo>& info() const { return info_; }
    [[nodiscard]] const Cpus& cpus() const { return cpus_; }

    // Cumulative microjoules since the daemon opened the counters.
    [[nodiscard]] Result<CpuEnergyReading> energy(unsigned id, bool cpu, bool dram) const;

  private:
    Cpus cpus_;
    std::vector<CpuInfo> info_;
};

// Average power between two readings `elapsed` apart (saturating at zero).
[[nodiscard]] CpuPowerReading power_between(const CpuEnergyReading& before, const CpuEnergyReading& after,
                                            std::chrono::microseconds elapsed);

}  // namespace zeus::zeusd
