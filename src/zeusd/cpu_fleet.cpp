#include "zeusd/cpu_fleet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zeus::zeusd {
namespace {

std::uint64_t to_microjoules(Joules energy) {
    return static_cast<std::uint64_t>(std::llround(std::max(0.0, energy.count()) * 1e6));
}

std::uint32_t milliwatts(std::uint64_t before_uj, std::uint64_t after_uj, std::chrono::microseconds elapsed) {
    if (elapsed.count() <= 0 || after_uj <= before_uj) return 0;
    const auto mw = static_cast<double>(after_uj - before_uj) * 1000.0 / static_cast<double>(elapsed.count());
    return static_cast<std::uint32_t>(std::min(mw, static_cast<double>(std::numeric_limits<std::uint32_t>::max())));
}

}  // namespace

CpuFleet::CpuFleet(Cpus cpus) : cpus_(std::move(cpus)) {
    for (unsigned id = 0; id < cpus_.size(); ++id) {
        const Cpu& cpu = cpus_[id];
        info_.push_back(CpuInfo{id, cpu.has_dram() && cpu.dram_status().ok()});
    }
}

Result<CpuEnergyReading> CpuFleet::energy(unsigned id, bool cpu, bool dram) const {
    const Cpu& device = cpus_[id];
    CpuEnergyReading reading;
    if (cpu) {
        auto package = device.package_energy();
        if (!package) return package.error();
        reading.cpu_uj = to_microjoules(package.value());
    }
    if (dram && device.has_dram()) {
        auto memory = device.dram_energy();
        if (!memory) return memory.error();
        reading.dram_uj = to_microjoules(memory.value());
    }
    return reading;
}

CpuPowerReading power_between(const CpuEnergyReading& before, const CpuEnergyReading& after,
                              std::chrono::microseconds elapsed) {
    CpuPowerReading power;
    power.cpu_mw = milliwatts(before.cpu_uj.value_or(0), after.cpu_uj.value_or(0), elapsed);
    if (before.dram_uj && after.dram_uj) power.dram_mw = milliwatts(*before.dram_uj, *after.dram_uj, elapsed);
    return power;
}

}  // namespace zeus::zeusd
