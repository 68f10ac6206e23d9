// A CPU package measured through its RAPL powercap zone (and dram sub-zone).
// The counters are shared with the Cpus set's sampler thread, which keeps
// reading them so no wrap is missed between the user's reads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zeus/device/counter_sampler.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus::rapl {

// One energy_uj file behind an accumulator. `counter` is null when the
// counter could not be set up; `status` then says why.
struct RaplCounter {
    std::shared_ptr<AccumulatedCounter> counter;
    Status status;
    Watts ceiling = kDefaultMaxPackagePower;  // zone_power_ceiling()
};

// The most the zone draws over a few milliseconds: its highest enforced
// short-term or peak power limit (constraint_N_name "short_term" or
// "peak_power", in a zone whose `enabled` is 1), capped at `bound`; `bound`
// when it states none. The long-term limit (PL1) is no ceiling: a package
// may exceed it for seconds.
[[nodiscard]] Watts zone_power_ceiling(const std::string& zone_dir, Watts bound);

// Sets up the counter of one zone directory: reads max_energy_range_uj for
// the wrap range and takes the first reading, which is the baseline that
// totals count from. Any failure (permission, missing or malformed file) is
// kept in `status`, never turned into a zero.
[[nodiscard]] RaplCounter open_counter(const std::string& zone_dir, const std::string& label, Watts max_power);

class RaplCpu final : public Cpu {
  public:
    RaplCpu(CpuIdentity identity, RaplCounter package, std::optional<RaplCounter> dram);

    [[nodiscard]] const CpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] Status status() const override { return package_.status; }
    [[nodiscard]] bool has_dram() const override { return dram_.has_value(); }
    [[nodiscard]] Status dram_status() const override;

    [[nodiscard]] Result<CpuEnergy> total_energy() const override;
    [[nodiscard]] Result<Joules> package_energy() const override;
    [[nodiscard]] Result<Joules> dram_energy() const override;
    [[nodiscard]] Result<CpuEnergy> accumulated() const override;
    [[nodiscard]] CpuPowerCeiling power_ceiling() const override;

  private:
    CpuIdentity identity_;
    RaplCounter package_;
    std::optional<RaplCounter> dram_;
};

}  // namespace zeus::rapl
