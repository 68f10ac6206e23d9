// Energy attribution, measured (docs/attribution.md "Measured"):
//  1. conservation: 1,000 random intervals with 1-16 processes per GPU, both
//     idle policies: the largest |Σ shares + remainder − ΔE| (must be 0 mJ);
//  2. accuracy against the simulator's per-process ground truth, concurrent
//     (MPS-like) and time-sliced sharing, 2-8 processes starting and ending at
//     random times, on the real NVML backend over the simulator: the
//     per-process error of ours, of dcgm-exporter's copy rule (every pod gets
//     the GPU's energy) and of Kepler's rule (one instant power sample minus
//     idle, times the interval, split by the latest SM utilization per PID),
//     all from the same samples; with processes that differ in utilization
//     only, and with processes that also differ in power per unit of utilization;
//  3. cost: one pass (engine + workload ledger, cached /proc) over 8 GPUs × 64
//     processes, and the first pass that reads every /proc/<pid>.
//
//   zeus_bench_attribution [--sim-library PATH] [--seeds N]
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/build_paths.hpp"
#include "zeus/attribution/ledger.hpp"
#include "zeus/device/gpus.hpp"

namespace {

using namespace zeus;
using namespace zeus::attribution;
using Clock = std::chrono::steady_clock;

// A ProcessSource answering from memory, as NVML would (bench 1 and 3).
class MemorySource : public ProcessSource {
  public:
    std::vector<std::vector<GpuProcess>> running;
    std::vector<std::vector<ProcessUtilizationSample>> samples;
    Result<std::vector<GpuProcess>> running_processes(std::size_t gpu) override { return running[gpu]; }
    Result<ProcessUtilizationSamples> process_utilization(std::size_t gpu, std::uint64_t last_seen) override {
        ProcessUtilizationSamples out{{}, last_seen};
        for (const auto& s : samples[gpu]) {
            if (s.timestamp_us <= last_seen) continue;
            out.samples.push_back(s);
            out.last_seen_us = std::max(out.last_seen_us, s.timestamp_us);
        }
        return out;
    }
};

void conservation() {
    std::int64_t worst = 0;
    std::int64_t total_delta = 0;
    for (IdlePolicy policy : {IdlePolicy::Unattributed, IdlePolicy::ByAllocation}) {
        MemorySource source;
        source.running.resize(8);
        source.samples.resize(8);
        AttributorOptions options;
        options.idle_policy = policy;
        Attributor attributor(source, options);
        std::mt19937_64 rng(11);
        std::vector<std::int64_t> counter(8, 0);
        auto now = Clock::time_point{} + std::chrono::hours(1);
        std::uint64_t ts = 1;
        for (std::size_t g = 0; g < 8; ++g) (void)attributor.step(g, Millijoules(0), now);
        for (int i = 0; i < 1000; ++i) {
            const std::size_t g = i % 8;
            now += std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 10'000)(rng));
            counter[g] += std::uniform_int_distribution<std::int64_t>(0, 7'000'000)(rng);
            const int n = std::uniform_int_distribution<int>(1, 16)(rng);
            source.running[g].clear();
            for (int p = 0; p < n; ++p) {
                source.running[g].push_back({static_cast<std::uint32_t>(100 + p), 0});
                if (rng() % 4 != 0) {
                    source.samples[g].push_back(
                        {static_cast<std::uint32_t>(100 + p), ts++, static_cast<std::uint32_t>(rng() % 101)});
                }
            }
            const auto a = attributor.step(g, Millijoules(counter[g]), now);
            worst = std::max(worst, std::abs(a.attributed_mj() + a.remainder.energy_mj() - a.delta_mj));
            total_delta += a.delta_mj;
        }
    }
    fmt::print(
        "1. conservation: 2 x 1,000 random intervals (1-16 processes, both idle policies), {:.1f} kJ in all: "
        "largest |shares + remainder - dE| = {} mJ\n",
        static_cast<double>(total_delta) / 1e6, worst);
}

struct Errors {
    std::vector<double> ours, dcgm, kepler;
};

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

// One scenario on GPU 0 of the simulator: n processes, each starting and
// ending at random times, attributed every second.
void scenario(const Gpus& gpus, const char* sharing, int n, bool different_power, std::mt19937_64& rng, int& next_pid,
              Errors& errors) {
    zeusSimSetSharing(0, sharing);
    GpusProcessSource source(gpus);
    Attributor attributor(source, {});
    const Gpu& gpu = gpus[0];
    double sim_t = 0;
    zeusSimNow(&sim_t);
    const auto at = [&] {
        double t = 0;
        zeusSimNow(&t);
        return Clock::time_point{} + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t));
    };
    // 30 s idle first: the engine learns the idle power (and Kepler's rule uses the same).
    (void)attributor.step(0, gpu.total_energy().value(), at());
    for (int s = 0; s < 30; ++s) {
        zeusSimAdvance(1);
        (void)attributor.step(0, gpu.total_energy().value(), at());
    }
    const double idle_w = static_cast<double>(attributor.idle_power(0).value_or(Milliwatts(0)).count()) / 1000.0;

    struct Proc {
        int pid, load = -1;
        int start_s, end_s;
        double util, weight;
    };
    std::vector<Proc> procs;
    for (int i = 0; i < n; ++i) {
        Proc p{next_pid++,
               -1,
               std::uniform_int_distribution<int>(0, 20)(rng),
               std::uniform_int_distribution<int>(40, 60)(rng),
               std::uniform_real_distribution<double>(0.2, 1.0)(rng),
               different_power ? std::uniform_real_distribution<double>(0.5, 2.0)(rng) : 1.0};
        procs.push_back(p);
    }
    std::map<std::uint32_t, double> ours, dcgm, kepler;
    for (int t = 0; t <= 63; ++t) {
        for (Proc& p : procs) {
            if (t == p.start_s) zeusSimProcessLoadBegin(0, p.util, p.pid, p.weight, &p.load);
            if (t == p.end_s && p.load >= 0) zeusSimLoadEnd(p.load), p.load = -1;
        }
        zeusSimAdvance(1);
        // Kepler: one instant power reading; per PID the max smUtil of the driver's whole buffer (lastSeen = 0).
        const double power_w = static_cast<double>(gpu.instant_power().value().power.count()) / 1000.0;
        std::map<std::uint32_t, double> latest;
        if (auto all = process_utilization(gpu, 0)) {
            for (const auto& s : all->samples) latest[s.pid] = std::max(latest[s.pid], static_cast<double>(s.sm_util));
        }
        const auto running = running_compute_processes(gpu);
        const auto interval = attributor.step(0, gpu.total_energy().value(), at());
        for (const Share& share : interval.shares) ours[share.pid] += static_cast<double>(share.energy_mj()) / 1000.0;
        if (running) {
            double sum = 0;
            for (const auto& p : *running) sum += latest.count(p.pid) ? latest[p.pid] : 0;
            for (const auto& p : *running) {
                dcgm[p.pid] += static_cast<double>(interval.delta_mj) / 1000.0;
                const double share = sum > 0 ? (latest.count(p.pid) ? latest[p.pid] : 0) / sum
                                             : 1.0 / static_cast<double>(running->size());
                kepler[p.pid] += std::max(0.0, power_w - idle_w) * share * interval.seconds;
            }
        }
    }
    for (const Proc& p : procs) {
        double truth = 0;
        zeusSimProcessEnergy(0, p.pid, &truth);
        if (truth <= 0) continue;
        const auto pid = static_cast<std::uint32_t>(p.pid);
        errors.ours.push_back(std::abs(ours[pid] - truth) / truth);
        errors.dcgm.push_back(std::abs(dcgm[pid] - truth) / truth);
        errors.kepler.push_back(std::abs(kepler[pid] - truth) / truth);
    }
}

void accuracy(const std::string& sim_library, int seeds) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("zeus-bench-attribution-{}", ::getpid());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "sim.json") << R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB"}]})";
    setenv("ZEUS_SIM_CONFIG", (dir / "sim.json").c_str(), 1);
    setenv("ZEUS_SIM_STATE", (dir / "state").c_str(), 1);
    GpuOptions options;
    options.simulate = true;
    options.simulator_library = sim_library;
    Gpus gpus = Gpus::open(options);
    if (gpus.size() == 0) {
        fmt::print("2. accuracy: no simulated GPU ({})\n", gpus.status() ? "none" : gpus.status().error().describe());
        return;
    }
    zeusSimOpen();
    fmt::print(
        "2. accuracy against the simulator's per-process truth (A100, virtual clock, 1 s intervals, {} seeds "
        "per row; relative error per process: median / p90 / max)\n",
        seeds);
    fmt::print("   {:<12} {:<26} {:>3} {:>6} | {:^23} | {:^23} | {:^23}\n", "sharing", "processes", "n", "procs",
               "ours", "dcgm-exporter (copy)", "Kepler (sample x dt)");
    std::mt19937_64 rng(5);
    int next_pid = 20000;
    for (bool different_power : {false, true}) {
        for (const char* sharing : {"concurrent", "time_sliced"}) {
            for (int n : {2, 4, 8}) {
                Errors e;
                for (int seed = 0; seed < seeds; ++seed) scenario(gpus, sharing, n, different_power, rng, next_pid, e);
                const auto cell = [](const std::vector<double>& v) {
                    return fmt::format("{:5.1f}% {:5.1f}% {:6.1f}%", 100 * percentile(v, 0.5), 100 * percentile(v, 0.9),
                                       100 * percentile(v, 1.0));
                };
                fmt::print("   {:<12} {:<26} {:>3} {:>6} | {} | {} | {}\n", sharing,
                           different_power ? "power/util 0.5-2x apart" : "differ in utilization", n, e.ours.size(),
                           cell(e.ours), cell(e.dcgm), cell(e.kepler));
            }
        }
    }
    zeusSimClose();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

void cost() {
    constexpr std::size_t kGpus = 8, kProcs = 64;
    const auto proc =
        std::filesystem::temp_directory_path() / fmt::format("zeus-bench-attribution-proc-{}", ::getpid());
    MemorySource source;
    source.running.resize(kGpus);
    source.samples.resize(kGpus);
    for (std::size_t g = 0; g < kGpus; ++g) {
        for (std::size_t p = 0; p < kProcs; ++p) {
            const auto pid = static_cast<std::uint32_t>(1000 + g * kProcs + p);
            source.running[g].push_back({pid, 0});
            std::filesystem::create_directories(proc / std::to_string(pid));
            std::ofstream(proc / std::to_string(pid) / "cgroup") << fmt::format(
                "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod4f1b3a8e_9c7d_4e2a_8b1f_"
                "{:012x}.slice/cri-containerd-{:064x}.scope\n",
                pid, pid);
            std::ofstream(proc / std::to_string(pid) / "status") << "Uid:\t1000\t1000\t1000\t1000\n";
        }
    }
    Attributor attributor(source, {});
    WorkloadResolver resolver(proc);
    WorkloadLedger ledger(resolver, std::chrono::minutes(10));
    auto now = Clock::time_point{} + std::chrono::hours(1);
    std::uint64_t ts = 1;
    std::vector<std::int64_t> counter(kGpus, 0);
    std::vector<double> pass_us;
    for (int pass = 0; pass < 301; ++pass) {
        now += std::chrono::seconds(1);
        for (std::size_t g = 0; g < kGpus; ++g) {
            counter[g] += 400'000;
            source.samples[g].clear();  // the driver's buffer: this second's samples, 6 per process
            for (int k = 0; k < 6; ++k) {
                for (const auto& p : source.running[g])
                    source.samples[g].push_back({p.pid, ts++, (p.pid * 7 + k) % 100});
            }
        }
        const auto started = Clock::now();
        for (std::size_t g = 0; g < kGpus; ++g) {
            (void)ledger.add(attributor.step(g, Millijoules(counter[g]), now), counter[g], now);
        }
        ledger.end_pass(now);
        pass_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
    }
    const double first = pass_us[1];  // pass 0 is the baseline; pass 1 resolves every PID
    pass_us.erase(pass_us.begin(), pass_us.begin() + 2);
    fmt::print(
        "3. cost of one pass, {} GPUs x {} processes (6 samples each per second, cached /proc): median {:.0f} us, "
        "p99 {:.0f} us; the first pass (reads {} /proc/<pid>/cgroup+status) {:.0f} us\n",
        kGpus, kProcs, percentile(pass_us, 0.5), percentile(pass_us, 0.99), kGpus * kProcs, first);
    std::error_code ignored;
    std::filesystem::remove_all(proc, ignored);
}

}  // namespace

int main(int argc, char** argv) {
    std::string sim_library = zeus::testing::sim_nvml_library_path();
    int seeds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--sim-library") {
            sim_library = argv[i + 1];
        } else if (flag == "--seeds") {
            seeds = std::max(1, std::atoi(argv[i + 1]));
        } else {
            std::fprintf(stderr, "zeus_bench_attribution: unknown option %s (use --sim-library PATH, --seeds N)\n",
                         flag.c_str());
            return 2;
        }
    }
    conservation();
    accuracy(sim_library, seeds);
    cost();
    return 0;
}
