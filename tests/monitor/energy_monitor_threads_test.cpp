// EnergyMonitor under many threads on the GPU simulator: every thread opens
// and closes its own windows on one monitor while one long window stays
// open, and each value must hold the simulator's ground truth. A counter
// refreshing every millisecond and a driver that takes tens of microseconds
// per call make readings of one counter by different threads overlap and
// finish out of order, which is what has to stay harmless: a reading fed
// after a newer one must not look like a counter restart (whose cost was the
// counter's whole absolute value, megajoules, in a window).
#include "monitor/energy_monitor_sim_fixture.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace zeus {
namespace {

using testing::EnergyMonitorSim;

constexpr unsigned kGpus = 4;
constexpr unsigned kThreads = 8;
constexpr int kWindowsPerThread = 400;

// The counter moves at every read (1 ms refresh); each driver call costs 20 µs.
constexpr const char* kConfig = R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 4,
  "counters": {"energy_period_ms": 1}, "driver_latency_us": {"default": 20}}]})";

// No value of one window may say the counter restarted: it never did.
void expect_no_restart(const Measurement& m) {
    for (const auto& [gpu, value] : m.gpu_energy) {
        for (const auto& warning : value.warnings) {
            EXPECT_EQ(warning.find("restarted"), std::string::npos) << "GPU " << gpu << ": " << warning;
        }
    }
}

class EnergyMonitorThreads : public EnergyMonitorSim, public ::testing::WithParamInterface<WindowEdges> {};

TEST_P(EnergyMonitorThreads, WindowsFromManyThreadsHoldTheTruth) {
    configure(kConfig);
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.edges = GetParam();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();

    const EdgeTruth long_begin = truth_around(kGpus, [&] { ASSERT_TRUE(monitor->begin_window("long").ok()); });
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const std::string name = "thread " + std::to_string(t);
            for (int w = 0; w < kWindowsPerThread; ++w) {
                const EdgeTruth begin = truth_around(kGpus, [&] { ASSERT_TRUE(monitor->begin_window(name).ok()); });
                Measurement m;
                const EdgeTruth end = truth_around(kGpus, [&] { m = monitor->end_window(name).value(); });
                ASSERT_EQ(m.gpu_energy.size(), kGpus);
                for (unsigned g = 0; g < kGpus; ++g) {
                    SCOPED_TRACE(name + ", window " + std::to_string(w));
                    expect_within_bound(m.gpu_energy.at(g), begin, end, g);
                }
                expect_no_restart(m);
                if (::testing::Test::HasFailure()) return;  // one failing window says enough
            }
        });
    }
    // Meanwhile plain counter reads (the path of Gpu::total_energy), each
    // thread's never behind its last.
    std::atomic<bool> windows_done{false};
    std::vector<std::thread> readers;
    for (unsigned g = 0; g < 2; ++g) {
        readers.emplace_back([&, g] {
            Millijoules last(0);
            while (!windows_done.load()) {
                const auto total = gpus[g].total_energy();
                ASSERT_TRUE(total.ok());
                ASSERT_GE(total->count(), last.count()) << "GPU " << g << "'s counter went backwards";
                last = *total;
            }
        });
    }
    for (auto& th : threads) th.join();
    windows_done = true;
    for (auto& th : readers) th.join();
    Measurement long_window;
    const EdgeTruth long_end = truth_around(kGpus, [&] { long_window = monitor->end_window("long").value(); });
    for (unsigned g = 0; g < kGpus; ++g) expect_within_bound(long_window.gpu_energy.at(g), long_begin, long_end, g);
    expect_no_restart(long_window);
    // Nor did the device layer take any reading for a restart or a glitch.
    for (unsigned g = 0; g < kGpus; ++g) {
        const auto stats = gpus[g].energy_counter_stats();
        ASSERT_TRUE(stats.has_value());
        EXPECT_TRUE(stats->exact()) << "GPU " << g << ": " << stats->resets << " resets, " << stats->backward_glitches
                                    << " backward glitches";
    }
}

INSTANTIATE_TEST_SUITE_P(Edges, EnergyMonitorThreads, ::testing::Values(WindowEdges::Synchronous, WindowEdges::Sampled),
                         [](const auto& param_info) {
                             return param_info.param == WindowEdges::Synchronous ? std::string("Synchronous")
                                                                                 : std::string("Sampled");
                         });

}  // namespace
}  // namespace zeus
