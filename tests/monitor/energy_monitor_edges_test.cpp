// EnergyMonitor's window edges on the GPU simulator: a load change just
// before an edge (synchronous edges, with and without waiting for the
// counter's refresh, and sampled edges), and sampled edges' bound, refresh
// period and watcher thread. The truth is read right around each edge.
#include "monitor/energy_monitor_sim_fixture.hpp"

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace zeus {
namespace {

using namespace std::chrono_literals;
using testing::EnergyMonitorSim;

// One watcher thread per monitor, whichever the edges: the sampled edges'
// sampler also feeds the counter watch.
TEST_F(EnergyMonitorSim, SampledEdgesRunOneWatcherThread) {
    const auto threads = [] {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& t : std::filesystem::directory_iterator("/proc/self/task")) ++n;
        return n;
    };
    Gpus gpus = open_gpus();
    for (const WindowEdges edges : {WindowEdges::Synchronous, WindowEdges::Sampled}) {
        EnergyMonitorOptions options;
        options.edges = edges;
        const std::size_t before = threads();
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
        ASSERT_TRUE(monitor->begin_window("w", false).ok());
        EXPECT_EQ(threads(), before + 1) << (edges == WindowEdges::Sampled ? "sampled" : "synchronous");
        monitor->stop_threads();
    }
}

// A load that starts d ms before a window begins and stops d ms before it
// ends, for d = 0, 2, 5, 10, 20 and 50 ms: one window each on GPU 0, with
// the truth read right around each edge's call and the calls timed (a read
// may come that much after the edge).
class LoadStepAtEdges : public EnergyMonitorSim {
  protected:
    struct EdgeStep {
        int d = 0;
        Measurement m;
        EdgeTruth begin;
        EdgeTruth end;
        Seconds calls{0.0};
    };
    template <class Check>
    static void run_edge_steps(EnergyMonitor& monitor, Check&& check) {
        for (const int d : {0, 2, 5, 10, 20, 50}) {
            SCOPED_TRACE("load change " + std::to_string(d) + " ms before each edge");
            EdgeStep step;
            step.d = d;
            const auto timed = [&step](auto&& call) {
                const auto t0 = std::chrono::steady_clock::now();
                call();
                step.calls += std::chrono::steady_clock::now() - t0;
            };
            std::this_thread::sleep_for(300ms);
            int load = -1;
            ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);
            std::this_thread::sleep_for(std::chrono::milliseconds(d));
            step.begin = truth_around(1, [&] { timed([&] { ASSERT_TRUE(monitor.begin_window("edge").ok()); }); });
            std::this_thread::sleep_for(600ms);
            ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
            std::this_thread::sleep_for(std::chrono::milliseconds(d));
            step.end = truth_around(1, [&] { timed([&] { step.m = monitor.end_window("edge").value(); }); });
            check(step);
        }
    }
};

// The edges must not extrapolate the counter with a power reading from
// before the change. With wait_for_counter_refresh the edges come from the
// counter's next two refreshes, exact while the power after the edge is
// steady.
TEST_F(LoadStepAtEdges, EdgesJustAfterALoadChangeAreExactWhenWaitingForTheCounter) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.gpu_indices = std::vector<unsigned>{0};
    options.wait_for_counter_refresh = true;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    run_edge_steps(*monitor, [](const EdgeStep& step) {
        expect_energy_between(step.m.gpu_energy.at(0).energy.count(), step.begin, step.end, 0, 5e-4);
        EXPECT_FALSE(step.m.gpu_energy.at(0).edge_error_bound.has_value());
        EXPECT_TRUE(step.m.trustworthy());
    });
}

// The same steps without wait_for_counter_refresh (a library caller's
// default): each edge is the counter's last refresh plus power × the time
// since it, with a power reading that may predate the step. That estimate
// can be off; the value must say by at most how much, and the truth must lie
// within it. The bound may not be vacuous either: at most the GPU's highest
// power limit over one counter period (100 ms) plus the call at each edge.
TEST_F(LoadStepAtEdges, EdgesJustAfterALoadChangeAreBoundedWithoutWaiting) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.gpu_indices = std::vector<unsigned>{0};
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    const double max_power = gpus[0].power_limit_constraints().value().max.count() / 1000.0;
    constexpr double kCounterPeriod = 0.1;
    run_edge_steps(*monitor, [&](const EdgeStep& step) {
        const EnergyValue& v = step.m.gpu_energy.at(0);
        ASSERT_TRUE(v.edge_error_bound.has_value());
        const double bound = v.edge_error_bound->count();
        // Within the bound of the span the edges' truths allow, give or take
        // the counter's 1 mJ resolution at each edge.
        EXPECT_GE(v.energy.count(), step.end.before[0] - step.begin.after[0] - bound - 0.002) << bound << " J";
        EXPECT_LE(v.energy.count(), step.end.after[0] - step.begin.before[0] + bound + 0.002) << bound << " J";
        EXPECT_LE(bound, max_power * (2 * kCounterPeriod + step.calls.count()));
    });
}

// Sampled edges (WindowEdges::Sampled) on the simulator: each edge is the
// watcher's latest sample extrapolated to the edge, and the truth must lie
// within the value's bound.

TEST_F(EnergyMonitorSim, SampledEdgesAreWithinTheirBoundOfGroundTruthUnderSteadyLoad) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(2, [&] { ASSERT_TRUE(monitor->begin_window("steady").ok()); });
    std::this_thread::sleep_for(1200ms);
    Measurement m;
    const auto end = truth_around(2, [&] { m = monitor->end_window("steady").value(); });
    for (unsigned g = 0; g < 2; ++g) {
        SCOPED_TRACE("GPU " + std::to_string(g));
        const EnergyValue& v = m.gpu_energy.at(g);
        EXPECT_EQ(v.source, EnergySource::HardwareCounter);
        expect_within_bound(v, begin, end, g);
        // Steady power: the extrapolation is exact, like a synchronous read's.
        expect_energy_between(v.energy.count(), begin, end, g, 0.001);
    }
    EXPECT_TRUE(m.trustworthy());
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

// After a load step 0–50 ms before each edge the sampled power predates the
// step: the value may be off, but never by more than its bound, and the
// bound stays near a synchronous read's: the GPU's highest power over one
// counter period plus the watcher's margin past the refresh, per edge.
TEST_F(LoadStepAtEdges, SampledEdgesJustAfterALoadChangeAreBounded) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.gpu_indices = std::vector<unsigned>{0};
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    const double max_power = gpus[0].power_limit_constraints().value().max.count() / 1000.0;
    constexpr double kCounterPeriod = 0.1;
    constexpr double kWatcherLag = 0.05;  // read margin, a retry and scheduling on a loaded machine
    run_edge_steps(*monitor, [&](const EdgeStep& step) {
        const EnergyValue& v = step.m.gpu_energy.at(0);
        ASSERT_TRUE(v.edge_error_bound.has_value());
        expect_within_bound(v, step.begin, step.end, 0);
        EXPECT_LE(v.edge_error_bound->count(), max_power * 2 * (kCounterPeriod + kWatcherLag) + 1e-9);
    });
}

// The watcher infers the counter's refresh period: with a 250 ms counter
// the edges' bound (power ceiling × sample age) must follow that period, not
// the usual 100 ms, and the truth must still lie within it.
TEST_F(EnergyMonitorSim, SampledEdgesFollowTheCountersOwnRefreshPeriod) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB", "counters": {"energy_period_ms": 250}}]})");
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    const double max_power = gpus[0].power_limit_constraints().value().max.count() / 1000.0;
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.6, &load), ZEUS_SIM_OK);
    for (int round = 0; round < 4; ++round) {
        const auto begin = truth_around(1, [&] { ASSERT_TRUE(monitor->begin_window("w").ok()); });
        std::this_thread::sleep_for(std::chrono::milliseconds(700 + 37 * round));
        Measurement m;
        const auto end = truth_around(1, [&] { m = monitor->end_window("w").value(); });
        const EnergyValue& v = m.gpu_energy.at(0);
        expect_within_bound(v, begin, end, 0);
        EXPECT_LE(v.edge_error_bound.value_or(Joules(0.0)).count(), max_power * 2 * (0.25 + 0.05) + 1e-9);
        EXPECT_TRUE(v.warnings.empty()) << v.warnings.front();
    }
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

}  // namespace
}  // namespace zeus
