// Stand-in devices whose every read returns at once, so that a benchmark
// times the library's own work (bookkeeping, locking, arithmetic), not the
// devices.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "support/fake_gpu.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::bench {

// A fake GPU (tests/support/fake_gpu.hpp) whose hot reads skip its clock,
// locks and script: the energy counter steps 7 mJ per read, the power is a
// steady 300 W.
class InstantGpu : public testing::FakeGpu {
  public:
    explicit InstantGpu(unsigned index) : FakeGpu(index) { script_identity().name = "instant"; }
    Result<Millijoules> total_energy() const override { return Millijoules(energy_ += 7); }
    Result<EnergySnapshot> energy_snapshot() const override {
        return EnergySnapshot{Millijoules(energy_ += 7), std::nullopt, std::nullopt};
    }
    Result<PowerReading> power(PowerDomain) const override { return PowerReading{Milliwatts(300'000), std::nullopt}; }

  private:
    mutable std::atomic<std::int64_t> energy_{0};  // read from monitors' threads too
};

class InstantCpu final : public Cpu {
  public:
    explicit InstantCpu(unsigned index) { identity_.index = index; }
    const CpuIdentity& identity() const override { return identity_; }
    Status status() const override { return {}; }
    bool has_dram() const override { return true; }
    Status dram_status() const override { return {}; }
    Result<CpuEnergy> total_energy() const override {
        const double energy = energy_ += 1.0;
        return CpuEnergy{Joules(energy), Joules(energy / 4), {}, CounterStats{}};
    }
    Result<Joules> package_energy() const override { return Joules(energy_); }
    Result<Joules> dram_energy() const override { return Joules(energy_ / 4); }
    Result<CpuEnergy> accumulated() const override { return total_energy(); }

  private:
    CpuIdentity identity_;
    mutable std::atomic<double> energy_{0.0};  // read on a sampled monitor's watcher thread
};

// `count` instant GPUs as a set.
inline Gpus instant_gpus(unsigned count) { return testing::fake_gpus<InstantGpu>(count); }

}  // namespace zeus::bench
