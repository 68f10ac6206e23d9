// The EnergyMonitor's own cost per window: begin + end over 8 GPUs and 2 CPU
// packages whose reads return at once, so what is timed is the library
// (bookkeeping, locking, arithmetic), not the devices. Target: ≤ 2 µs.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "zeus/monitor/energy_monitor.hpp"

namespace {

using namespace zeus;

// A GPU with an energy counter whose every read returns immediately.
class InstantGpu final : public Gpu {
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

void BM_BeginEndWindow_8Gpus_2Cpus(benchmark::State& state) {
    std::vector<std::unique_ptr<Gpu>> gpu_list;
    for (unsigned i = 0; i < 8; ++i) gpu_list.push_back(std::make_unique<InstantGpu>(i));
    Gpus gpus(std::move(gpu_list), {}, {}, GpuBackendInfo{});
    std::vector<std::unique_ptr<Cpu>> cpu_list;
    for (unsigned i = 0; i < 2; ++i) cpu_list.push_back(std::make_unique<InstantCpu>(i));
    Cpus cpus(std::move(cpu_list), {}, {}, "", nullptr);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr).value();
    for (auto _ : state) {
        (void)monitor->begin_window("step", false);
        auto m = monitor->end_window("step", false);
        benchmark::DoNotOptimize(m);
    }
}
BENCHMARK(BM_BeginEndWindow_8Gpus_2Cpus);

}  // namespace

BENCHMARK_MAIN();
