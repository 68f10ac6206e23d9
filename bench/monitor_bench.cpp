// PowerMonitor overhead: CPU time of its sampling thread at 100 Hz over 8 GPUs
// × 3 domains, how much of it is the device reads (simulator + NVML backend)
// versus the monitor's own work, and the bytes each stored sample costs.
// Runs on the GPU simulator (8 simulated H100s, which support all three
// domains) on the real clock. Results are recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "monitor/power_series.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/monitor/power_monitor.hpp"
#include "support/build_paths.hpp"

namespace {

using namespace std::chrono_literals;

constexpr unsigned kGpus = 8;
constexpr std::array kDomains{zeus::PowerDomain::DeviceInstant, zeus::PowerDomain::DeviceAverage,
                              zeus::PowerDomain::MemoryAverage};

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A simulator of its own: 8 H100s on the real clock, in a shared state file
// as when the workload runs in another process; removed at exit (after the
// GPUs, which are constructed later and so destroyed first).
struct SimulatorDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("zeus-bench-monitor-" + std::to_string(::getpid()));
    SimulatorDir() { std::filesystem::create_directories(path); }
    ~SimulatorDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

zeus::Gpus& gpus() {
    static SimulatorDir sim_dir;
    static zeus::Gpus instance = [] {
        const auto& dir = sim_dir.path;
        // The project's own cost: no simulated driver latency (docs/simulator.md).
        std::ofstream(dir / "sim.json")
            << R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 8, "driver_latency_us": {"default": 0}}]})";
        setenv("ZEUS_SIM_CONFIG", (dir / "sim.json").c_str(), 1);
        setenv("ZEUS_SIM_STATE", (dir / "state").c_str(), 1);
        unsetenv("CUDA_VISIBLE_DEVICES");
        zeus::GpuOptions options;
        options.simulate = true;
        options.simulator_library = zeus::testing::sim_nvml_library_path();
        return zeus::Gpus::open(options);
    }();
    return instance;
}

bool ready(benchmark::State& state) {
    if (gpus().size() != kGpus) {
        state.SkipWithError(gpus().empty() ? gpus().status().error().describe().c_str() : "expected 8 simulated GPUs");
        return false;
    }
    return true;
}

// A bare polling thread for comparison: wakes at 100 Hz on the same absolute
// schedule and, with `read`, does the monitor's 24 device reads and nothing
// else. Its CPU time is what any 100 Hz poller pays for wake-ups and for the
// simulator + NVML backend; the monitor's own cost is what it uses beyond.
struct PollingCost {
    double cpu_s = 0;
    double wall_s = 0;
    double sweeps = 0;
};
PollingCost bare_polling(bool read, std::chrono::nanoseconds wall) {
    PollingCost cost;
    std::thread thread([&] {
        const double cpu0 = thread_cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        auto next = t0;
        while (next - t0 < wall) {
            if (read) {
                for (unsigned g = 0; g < kGpus; ++g) {
                    for (auto d : kDomains) benchmark::DoNotOptimize(gpus()[g].power(d));
                }
            }
            ++cost.sweeps;
            next += 10ms;
            std::this_thread::sleep_until(next);
        }
        cost.cpu_s = thread_cpu_seconds() - cpu0;
        cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    thread.join();
    return cost;
}

// The acceptance target: sampling 8 GPUs × 3 domains at 100 Hz uses under 2 %
// of one core. Each iteration runs a monitor for 2 s of wall time, then the
// two bare pollers for 2 s each.
void BM_PowerMonitorSampling8x3At100Hz(benchmark::State& state) {
    if (!ready(state)) return;
    double cpu_s = 0, wall_s = 0, sweeps = 0, failed = 0, stored = 0;
    PollingCost wake, reads;
    for (auto _ : state) {
        zeus::PowerMonitorOptions options;
        options.update_period = 10ms;
        auto monitor = zeus::PowerMonitor::start(gpus(), options);
        if (!monitor) {
            state.SkipWithError(monitor.error().describe().c_str());
            return;
        }
        const auto s0 = (*monitor)->stats();
        const auto w0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(2s);
        const auto s1 = (*monitor)->stats();
        const auto w1 = std::chrono::steady_clock::now();
        (*monitor)->stop();
        cpu_s += std::chrono::duration<double>(s1.sampling_cpu_time - s0.sampling_cpu_time).count();
        wall_s += std::chrono::duration<double>(w1 - w0).count();
        sweeps += static_cast<double>(s1.sweeps - s0.sweeps);
        failed += static_cast<double>(s1.failed_reads);
        stored = static_cast<double>(s1.stored_samples);
        const PollingCost w = bare_polling(false, 2s);
        const PollingCost r = bare_polling(true, 2s);
        wake.cpu_s += w.cpu_s;
        wake.wall_s += w.wall_s;
        reads.cpu_s += r.cpu_s;
        reads.wall_s += r.wall_s;
    }
    const double monitor_pct = 100 * cpu_s / wall_s;
    const double wake_pct = 100 * wake.cpu_s / wake.wall_s;
    const double reads_pct = 100 * reads.cpu_s / reads.wall_s;
    state.counters["core_pct"] = monitor_pct;
    state.counters["bare_wakeups_pct"] = wake_pct;
    state.counters["bare_wakeups_and_reads_pct"] = reads_pct;
    state.counters["monitor_own_pct"] = monitor_pct - reads_pct;
    state.counters["sweeps_per_s"] = sweeps / wall_s;
    state.counters["cpu_us_per_sweep"] = 1e6 * cpu_s / sweeps;
    state.counters["failed_reads"] = failed;
    state.counters["stored_samples"] = stored;
}
BENCHMARK(BM_PowerMonitorSampling8x3At100Hz)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

// One device read in a tight loop (warm caches): the floor of the read cost.
void BM_DeviceRead(benchmark::State& state) {
    if (!ready(state)) return;
    for (auto _ : state) {
        for (unsigned g = 0; g < kGpus; ++g) {
            for (auto d : kDomains) benchmark::DoNotOptimize(gpus()[g].power(d));
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kGpus * kDomains.size()));
}
BENCHMARK(BM_DeviceRead);

// Counts what the container really allocates.
struct AllocationCount {
    std::size_t bytes = 0;
    std::size_t blocks = 0;
};
template <class T>
struct CountingAllocator {
    using value_type = T;
    AllocationCount* count;
    explicit CountingAllocator(AllocationCount* c) : count(c) {}
    template <class U>
    CountingAllocator(const CountingAllocator<U>& other) : count(other.count) {}  // NOLINT
    T* allocate(std::size_t n) {
        count->bytes += n * sizeof(T);
        ++count->blocks;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) {
        count->bytes -= n * sizeof(T);
        --count->blocks;
        std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const CountingAllocator<U>& o) const { return count == o.count; }
};

// Bytes per stored sample in the monitor's storage (a deque of 16-byte
// samples): the container's own allocations, and with glibc malloc's 16-byte
// chunk header per allocation (`with_malloc`). Arg: samples stored.
void BM_BytesPerStoredSample(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    double bytes = 0, with_malloc = 0;
    for (auto _ : state) {
        AllocationCount count;
        {
            zeus::monitor_detail::SampleSeries<zeus::PowerSample, CountingAllocator<zeus::PowerSample>> series(
                0, CountingAllocator<zeus::PowerSample>(&count));
            const zeus::Timestamp t0 = zeus::MonitorClock::now();
            for (std::size_t i = 0; i < n; ++i) {
                series.push(zeus::PowerSample{t0 + std::chrono::milliseconds(i), zeus::Watts(100.0 + i % 7)});
            }
            bytes = static_cast<double>(count.bytes + sizeof(series));
            with_malloc = bytes + 16.0 * static_cast<double>(count.blocks);
            benchmark::DoNotOptimize(series.back());
        }
    }
    state.counters["bytes_per_sample"] = bytes / static_cast<double>(n);
    state.counters["with_malloc_per_sample"] = with_malloc / static_cast<double>(n);
    state.counters["sizeof_sample"] = sizeof(zeus::PowerSample);
}
BENCHMARK(BM_BytesPerStoredSample)->Arg(100)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

// Cost of energy() over a window: a binary search and one pass over the
// samples in it. Arg: samples in the window.
void BM_IntegrateWindow(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    zeus::monitor_detail::SampleSeries<zeus::PowerSample> series;
    const zeus::Timestamp t0 = zeus::MonitorClock::now();
    for (std::size_t i = 0; i < n; ++i) {
        series.push(zeus::PowerSample{t0 + std::chrono::milliseconds(10 * i), zeus::Watts(100.0 + i % 7)});
    }
    const auto end = t0 + std::chrono::milliseconds(10 * n);
    for (auto _ : state) {
        benchmark::DoNotOptimize(series.integrate(t0, end, [](const zeus::PowerSample& s) { return s.power.count(); }));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_IntegrateWindow)->Arg(100)->Arg(10'000)->Arg(1'000'000);

}  // namespace

BENCHMARK_MAIN();
