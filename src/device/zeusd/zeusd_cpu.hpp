// CPU package and DRAM energy read through zeusd (GET
// /cpu/get_cumulative_energy), for processes that may not read RAPL
// themselves. The daemon's counters are already 64-bit and wrap-corrected,
// so no sampler thread is needed here; each reading still goes through a
// counter accumulator so that a daemon restart (its counters start over)
// is a counted reset, never energy going backwards.
#pragma once

#include <memory>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/counter_sampler.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus::zeusd_backend {

class ZeusdCpu final : public Cpu {
  public:
    // `first` is the baseline reading of this package (taken by open_cpus
    // in one request for all packages); totals count from it.
    ZeusdCpu(CpuIdentity identity, std::shared_ptr<ZeusdClient> client, const CpuOptions& options,
             const ZeusdCpuEnergy& first);

    [[nodiscard]] const CpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] Status status() const override { return {}; }
    [[nodiscard]] bool has_dram() const override { return dram_ != nullptr; }
    [[nodiscard]] Status dram_status() const override;

    [[nodiscard]] Result<CpuEnergy> total_energy() const override;
    [[nodiscard]] Result<Joules> package_energy() const override;
    [[nodiscard]] Result<Joules> dram_energy() const override;
    [[nodiscard]] Result<CpuEnergy> accumulated() const override;
    // The daemon states no limits: CpuOptions' bounds.
    [[nodiscard]] CpuPowerCeiling power_ceiling() const override { return ceiling_; }

  private:
    // One request for this package; `cpu`/`dram` say which counters to ask for.
    [[nodiscard]] Result<ZeusdCpuEnergy> fetch(bool cpu, bool dram) const;
    [[nodiscard]] Error dram_vanished() const;

    CpuIdentity identity_;
    std::shared_ptr<ZeusdClient> client_;
    std::shared_ptr<AccumulatedCounter> package_;
    std::shared_ptr<AccumulatedCounter> dram_;  // null when the daemon reports no DRAM for this package
    CpuPowerCeiling ceiling_;
};

// The Cpus set through the daemon at options.zeusd: every package the
// daemon lists. An empty set whose status() says why (daemon unreachable,
// cpu-read not enabled or not in the token's scopes, no RAPL on the daemon's
// host) and the fix.
[[nodiscard]] Cpus open_cpus(const CpuOptions& options);

}  // namespace zeus::zeusd_backend
