// What the power-limit optimizer costs a training loop: on_step_begin on a
// step that opens or closes nothing (almost every step), and a whole profile
// over 8 GPUs (1,052 steps: 21 limits from 700 W down to 200 W, the defaults)
// with stand-in devices that answer at once, so the library's own work
// (state machine, energy windows, limit bookkeeping) is what is timed.
#include <benchmark/benchmark.h>

#include <limits>

#include "instant_devices.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

namespace {

using namespace zeus;

void BM_OptimizerQuietStep_8Gpus(benchmark::State& state) {
    Gpus gpus = bench::instant_gpus(8);
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    optimizer::PowerLimitOptimizerOptions options;
    options.wait_steps = 0;
    options.warmup_steps = std::numeric_limits<std::size_t>::max() / 2;  // stays in the warm-up
    auto plo = optimizer::GlobalPowerLimitOptimizer::create(gpus, *monitor, options).value();
    (void)plo->on_step_begin();  // sets the first limit
    for (auto _ : state) benchmark::DoNotOptimize(plo->on_step_begin());
}
BENCHMARK(BM_OptimizerQuietStep_8Gpus);

void BM_OptimizerWholeProfile_8Gpus(benchmark::State& state) {
    Gpus gpus = bench::instant_gpus(8);
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    std::size_t steps = 0;
    for (auto _ : state) {
        auto plo = optimizer::GlobalPowerLimitOptimizer::create(gpus, *monitor, {}).value();
        steps = 0;
        while (!plo->done()) {
            (void)plo->on_step_begin();
            ++steps;
        }
        benchmark::DoNotOptimize(plo->optimal_power_limit());
    }
    state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_OptimizerWholeProfile_8Gpus)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
