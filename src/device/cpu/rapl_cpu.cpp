#include "device/cpu/rapl_cpu.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <limits>

#include "device/cpu/sysfs_file.hpp"

namespace zeus::rapl {
namespace {

Result<std::uint64_t> read_range(const std::string& path) {
    auto max = read_u64_file(path);
    if (!max) {
        Error e = max.error();
        if (e.code == ErrorCode::NotFound) {
            e.message += ": without the counter's range its wraparounds cannot be corrected, so it is not used";
            e.hint = "the kernel's powercap driver writes this file for every RAPL zone; if this is a copied or "
                     "mounted tree, include it";
        }
        return e;
    }
    if (*max == 0 || *max == std::numeric_limits<std::uint64_t>::max()) {
        return Error{ErrorCode::InvalidState, fmt::format("{} holds {}, which is not a counter range", path, *max),
                     "the kernel writes the counter's maximum in microjoules there; fix the tree", 0};
    }
    return *max;
}

}  // namespace

Watts zone_power_ceiling(const std::string& zone_dir, Watts bound) {
    namespace fs = std::filesystem;
    const fs::path zone(zone_dir);
    if (auto enabled = read_u64_file((zone / "enabled").string()); !enabled || *enabled != 1) return bound;
    std::optional<Watts> ceiling;
    // The kernel numbers a zone's constraints from 0 without gaps.
    for (unsigned n = 0;; ++n) {
        auto name = read_trimmed((zone / fmt::format("constraint_{}_name", n)).string());
        if (!name) break;
        if (*name != "short_term" && *name != "peak_power") continue;
        auto limit = read_u64_file((zone / fmt::format("constraint_{}_power_limit_uw", n)).string());
        if (!limit || *limit == 0) continue;
        const Watts watts(static_cast<double>(*limit) * 1e-6);
        if (!ceiling || watts > *ceiling) ceiling = watts;
    }
    return ceiling && *ceiling < bound ? *ceiling : bound;
}

RaplCounter open_counter(const std::string& zone_dir, const std::string& label, Watts max_power) {
    namespace fs = std::filesystem;
    const std::string energy = (fs::path(zone_dir) / "energy_uj").string();
    auto max = read_range((fs::path(zone_dir) / "max_energy_range_uj").string());
    if (!max) return RaplCounter{nullptr, max.error()};
    // energy_uj takes every value from 0 to max_energy_range_uj inclusive (the
    // kernel reports the register's all-ones value as exactly the maximum),
    // then wraps to 0: the modulus is max + 1. The hardware register really
    // steps in units of 15.3-61 µJ, so a wrap is max + one unit; using + 1
    // undercounts by less than one unit per wrap (< 1e-9 of the energy of a
    // wrap), and guessing the unit would need the driver's internal formula.
    // The original adds max_energy_range_uj per wrap, and a reading equal to
    // it would be taken for 0.
    CounterSpec spec{fmt::format("RAPL {} ({})", label, energy), *max + 1, 1e-6, max_power};
    auto counter = std::make_shared<AccumulatedCounter>(
        std::move(spec), [energy]() -> Result<std::uint64_t> { return read_u64_file(energy); });
    auto first = counter->read();  // the baseline; also proves the file is readable now
    if (!first) return RaplCounter{nullptr, first.error()};
    return RaplCounter{std::move(counter), Status(), zone_power_ceiling(zone_dir, max_power)};
}

RaplCpu::RaplCpu(CpuIdentity identity, RaplCounter package, std::optional<RaplCounter> dram)
    : identity_(std::move(identity)), package_(std::move(package)), dram_(std::move(dram)) {}

Status RaplCpu::dram_status() const {
    if (!dram_) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("CPU {} ({}, {}) has no DRAM zone", identity_.index, identity_.zone_name,
                                 identity_.path),
                     "this CPU or platform does not expose DRAM energy through RAPL (usual on client CPUs and "
                     "on many AMD parts); only the package is measured",
                     0};
    }
    return dram_->status;
}

Result<Joules> RaplCpu::package_energy() const {
    if (!package_.status) return package_.status.error();
    return package_.counter->read();
}

Result<Joules> RaplCpu::dram_energy() const {
    if (auto s = dram_status(); !s) return s.error();
    return dram_->counter->read();
}

Result<CpuEnergy> RaplCpu::total_energy() const {
    if (auto package = package_energy(); !package) return package.error();
    if (dram_) {
        if (auto dram = dram_energy(); !dram) return dram.error();
    }
    return accumulated();
}

CpuPowerCeiling RaplCpu::power_ceiling() const {
    CpuPowerCeiling ceiling;
    ceiling.package = package_.ceiling;
    if (dram_) ceiling.dram = dram_->ceiling;
    return ceiling;
}

Result<CpuEnergy> RaplCpu::accumulated() const {
    if (!package_.status) return package_.status.error();
    if (auto s = dram_status(); dram_ && !s) return s.error();
    // Each total and its stats come from one accumulator; the sampler may
    // add a reading between the two calls, which only makes the stats newer.
    CpuEnergy energy;
    energy.package = package_.counter->accumulator().total();
    energy.package_stats = package_.counter->stats();
    if (dram_) {
        energy.dram = dram_->counter->accumulator().total();
        energy.dram_stats = dram_->counter->stats();
    }
    return energy;
}

}  // namespace zeus::rapl
