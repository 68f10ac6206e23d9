// Stand-in devices whose every read returns at once, so that a benchmark
// times the library's own work (bookkeeping, locking, arithmetic), not the
// devices.
#pragma once

#include <memory>
#include <vector>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::bench {

// A GPU with an energy counter whose every read returns immediately; tests
// derive from it to script its reads (tests/monitor/energy_monitor_test.cpp).
class InstantGpu : public Gpu {
  public:
    explicit InstantGpu(unsigned index) {
        identity_.index = index;
        identity_.physical_index = index;
        identity_.name = "instant";
        identity_.architecture = GpuArchitecture::Hopper;
        caps_.energy_counter = Capability::yes();
        caps_.instant_power = {Capability::yes(), PowerScope::Gpu};
    }
    const GpuIdentity& identity() const override { return identity_; }
    const GpuCapabilities& capabilities() const override { return caps_; }
    Status status() const override { return {}; }
    Result<Millijoules> total_energy() const override { return Millijoules(energy_ += 7); }
    Result<PowerReading> power(PowerDomain) const override { return PowerReading{Milliwatts(300'000), std::nullopt}; }
    Result<Celsius> temperature() const override { return Celsius(50.0); }
    Result<Milliwatts> power_limit() const override { return Milliwatts(700'000); }
    Result<Milliwatts> default_power_limit() const override { return Milliwatts(700'000); }
    Result<PowerLimitConstraints> power_limit_constraints() const override {
        return PowerLimitConstraints{Milliwatts(200'000), Milliwatts(700'000)};
    }
    Status set_power_limit(Milliwatts) override { return {}; }
    Status reset_power_limit() override { return {}; }
    Status check_power_limit_control() override { return {}; }
    Result<std::vector<Megahertz>> supported_memory_clocks() const override { return std::vector<Megahertz>{}; }
    Result<std::vector<Megahertz>> supported_graphics_clocks(std::optional<Megahertz>) const override {
        return std::vector<Megahertz>{};
    }
    Status set_gpu_locked_clocks(Megahertz, Megahertz) override { return {}; }
    Status reset_gpu_locked_clocks() override { return {}; }
    Status set_memory_locked_clocks(Megahertz, Megahertz) override { return {}; }
    Status reset_memory_locked_clocks() override { return {}; }
    Result<bool> persistence_mode() const override { return true; }
    Status set_persistence_mode(bool) override { return {}; }

  private:
    GpuIdentity identity_;
    GpuCapabilities caps_;
    mutable std::int64_t energy_ = 0;
};

class InstantCpu final : public Cpu {
  public:
    explicit InstantCpu(unsigned index) { identity_.index = index; }
    const CpuIdentity& identity() const override { return identity_; }
    Status status() const override { return {}; }
    bool has_dram() const override { return true; }
    Status dram_status() const override { return {}; }
    Result<CpuEnergy> total_energy() const override {
        energy_ += 1.0;
        return CpuEnergy{Joules(energy_), Joules(energy_ / 4), {}, CounterStats{}};
    }
    Result<Joules> package_energy() const override { return Joules(energy_); }
    Result<Joules> dram_energy() const override { return Joules(energy_ / 4); }
    Result<CpuEnergy> accumulated() const override { return total_energy(); }

  private:
    CpuIdentity identity_;
    mutable double energy_ = 0;
};

// `count` instant GPUs as a set.
inline Gpus instant_gpus(unsigned count) {
    std::vector<std::unique_ptr<Gpu>> list;
    for (unsigned i = 0; i < count; ++i) list.push_back(std::make_unique<InstantGpu>(i));
    return Gpus(std::move(list), {}, {}, GpuBackendInfo{});
}

}  // namespace zeus::bench
