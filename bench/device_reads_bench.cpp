// Cost of one reading through the product's NVML backend. By default it runs
// on the GPU simulator (what CI and GPU-less machines have); with
// ZEUS_BENCH_REAL_GPU=1 it loads the real libnvidia-ml.so.1 instead.
// Results are recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "support/build_paths.hpp"

namespace {

zeus::Gpus& gpus() {
    static zeus::Gpus instance = [] {
        zeus::GpuOptions options;
        const char* real = std::getenv("ZEUS_BENCH_REAL_GPU");
        if (real == nullptr || std::string(real) != "1") {
            options.simulate = true;
            options.simulator_library = zeus::testing::sim_nvml_library_path();
            if (std::getenv("ZEUS_SIM_STATE") == nullptr) {
                // Shared-state mode, as when a workload runs in another process.
                const auto state = std::filesystem::temp_directory_path() / "zeus-bench-sim.state";
                setenv("ZEUS_SIM_STATE", state.c_str(), 1);
            }
        }
        return zeus::Gpus::open(options);
    }();
    return instance;
}

zeus::Gpu* first_gpu(benchmark::State& state) {
    if (gpus().empty()) {
        state.SkipWithError(gpus().status().error().describe().c_str());
        return nullptr;
    }
    return &gpus()[0];
}

void BM_TotalEnergy(benchmark::State& state) {
    zeus::Gpu* gpu = first_gpu(state);
    if (gpu == nullptr) return;
    for (auto _ : state) {
        auto energy = gpu->total_energy();
        benchmark::DoNotOptimize(energy);
    }
    state.SetLabel(gpus().backend_info().simulated ? "simulator" : gpu->identity().name);
}
BENCHMARK(BM_TotalEnergy);

void BM_InstantPower(benchmark::State& state) {
    zeus::Gpu* gpu = first_gpu(state);
    if (gpu == nullptr) return;
    for (auto _ : state) {
        auto power = gpu->instant_power();
        benchmark::DoNotOptimize(power);
    }
    state.SetLabel(gpus().backend_info().simulated ? "simulator" : gpu->identity().name);
}
BENCHMARK(BM_InstantPower);

void BM_Temperature(benchmark::State& state) {
    zeus::Gpu* gpu = first_gpu(state);
    if (gpu == nullptr) return;
    for (auto _ : state) {
        auto t = gpu->temperature();
        benchmark::DoNotOptimize(t);
    }
}
BENCHMARK(BM_Temperature);

// The same energy read straight through the C ABI, without the product's
// wrapper: the difference to BM_TotalEnergy is Zeus's own cost.
void BM_RawNvmlTotalEnergy(benchmark::State& state) {
    if (first_gpu(state) == nullptr) return;
    auto lib = zeus::DynamicLibrary::open(gpus().backend_info().library_path);
    if (!lib) {
        state.SkipWithError(lib.error().describe().c_str());
        return;
    }
    using GetHandle = int (*)(unsigned, void**);
    using GetEnergy = int (*)(void*, unsigned long long*);
    auto get_handle = lib->function<GetHandle>("nvmlDeviceGetHandleByIndex_v2");
    auto get_energy = lib->function<GetEnergy>("nvmlDeviceGetTotalEnergyConsumption");
    void* handle = nullptr;
    if (get_handle == nullptr || get_energy == nullptr ||
        get_handle(gpus()[0].identity().physical_index, &handle) != 0) {
        state.SkipWithError("cannot resolve NVML functions");
        return;
    }
    unsigned long long mj = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(get_energy(handle, &mj));
    }
}
BENCHMARK(BM_RawNvmlTotalEnergy);

}  // namespace

BENCHMARK_MAIN();
