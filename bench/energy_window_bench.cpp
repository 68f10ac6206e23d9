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

// Synchronous edges (WindowEdges::Synchronous): each edge reads every device.
void BM_BeginEndWindow_8Gpus_2Cpus(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(8);
    std::vector<std::unique_ptr<Cpu>> cpu_list;
    for (unsigned i = 0; i < 2; ++i) cpu_list.push_back(std::make_unique<InstantCpu>(i));
    Cpus cpus(std::move(cpu_list), {}, {}, "", nullptr);
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Synchronous;
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, options).value();
    for (auto _ : state) {
        (void)monitor->begin_window("step", false);
        auto m = monitor->end_window("step", false);
        benchmark::DoNotOptimize(m);
    }
}
BENCHMARK(BM_BeginEndWindow_8Gpus_2Cpus);

// Begin + end with each edge from the watcher's latest frame
// (WindowEdges::Sampled), no CPUs: what stays is a clock, a frame pointer and
// the window's bookkeeping at the edges, plus building the result (per GPU).
void BM_BeginEndWindow_Sampled(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(static_cast<unsigned>(state.range(0)));
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    (void)monitor->begin_window("warm-up", false);
    for (auto _ : state) {
        (void)monitor->begin_window("step", false);
        auto m = monitor->end_window("step", false);
        benchmark::DoNotOptimize(m);
    }
}
BENCHMARK(BM_BeginEndWindow_Sampled)->Arg(1)->Arg(8)->Arg(64);

// The default monitor (sampled edges), and the window's total GPU energy
// read: the pair plus computing every GPU's value from the two frames.
void BM_BeginEndWindowAndTotal_Default(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(static_cast<unsigned>(state.range(0)));
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    (void)monitor->begin_window("warm-up", false);
    for (auto _ : state) {
        (void)monitor->begin_window("step", false);
        auto m = monitor->end_window("step", false);
        benchmark::DoNotOptimize(m.value().total_gpu_energy());
    }
}
BENCHMARK(BM_BeginEndWindowAndTotal_Default)->Arg(1)->Arg(8)->Arg(64);

// Sampled edges over GPUs and 2 CPU packages with DRAM: the packages are
// read on the watcher thread too, so the pair costs what it does without
// them (a synchronous edge reads each package's two counters).
void BM_BeginEndWindow_Sampled_2Cpus(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(static_cast<unsigned>(state.range(0)));
    std::vector<std::unique_ptr<Cpu>> cpu_list;
    for (unsigned i = 0; i < 2; ++i) cpu_list.push_back(std::make_unique<InstantCpu>(i));
    Cpus cpus(std::move(cpu_list), {}, {}, "", nullptr);
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, options).value();
    (void)monitor->begin_window("warm-up", false);
    for (auto _ : state) {
        (void)monitor->begin_window("step", false);
        auto m = monitor->end_window("step", false);
        benchmark::DoNotOptimize(m);
    }
}
BENCHMARK(BM_BeginEndWindow_Sampled_2Cpus)->Arg(1)->Arg(8)->Arg(64);

// The begin edge alone (each iteration ends its window untimed would cost a
// pause/resume per iteration, ~0.3 µs): begins windows under fresh names.
void BM_BeginWindow_Sampled(benchmark::State& state) {
    Gpus gpus = zeus::bench::instant_gpus(static_cast<unsigned>(state.range(0)));
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    (void)monitor->begin_window("warm-up", false);
    for (auto _ : state) (void)monitor->begin_window("step", false, /*restart=*/true);
}
BENCHMARK(BM_BeginWindow_Sampled)->Arg(1)->Arg(8)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
