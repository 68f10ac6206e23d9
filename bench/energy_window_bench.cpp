// The EnergyMonitor's own cost per window: begin + end over 8 GPUs and 2 CPU
// packages whose reads return at once, so what is timed is the library
// (bookkeeping, locking, arithmetic), not the devices. Target: ≤ 2 µs.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "instant_devices.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace {

using namespace zeus;
using zeus::bench::InstantCpu;

void BM_BeginEndWindow_8Gpus_2Cpus(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(8);
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
