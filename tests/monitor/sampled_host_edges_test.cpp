// Sampled window edges of CPU packages (RAPL) and the SoC
// (src/monitor/host_edges.*): the watcher's latest reading extrapolated to
// the edge. Over fake packages and a fake SoC whose truth is the power the
// test scripts, integrated on the steady clock, so each value is checked
// against what the devices really drew between the edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/fake_cpu.hpp"
#include "support/fake_gpu.hpp"
#include "support/fake_soc.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::FakeCpu;

EnergyMonitorOptions sampled() {
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    return options;
}

// The times just before and just after each edge: the truth between the
// edges lies between (inner) and (outer) of these.
struct Edges {
    Clock::time_point before_begin, after_begin, before_end, after_end;
};

// One window of `length` (sync_execution=False), its edges bracketed.
Measurement window(EnergyMonitor& monitor, std::chrono::nanoseconds length, Edges& edges,
                   const std::function<void()>& just_before_end = {}) {
    edges.before_begin = Clock::now();
    EXPECT_TRUE(monitor.begin_window("w", false).ok());
    edges.after_begin = Clock::now();
    std::this_thread::sleep_for(length);
    if (just_before_end) just_before_end();
    edges.before_end = Clock::now();
    auto m = monitor.end_window("w", false);
    edges.after_end = Clock::now();
    EXPECT_TRUE(m.ok()) << (m ? "" : m.error().describe());
    return m ? std::move(m).value() : Measurement{};
}

// What package `cpu` drew between the edges: [least, most].
std::pair<Joules, Joules> package_truth(const FakeCpu& cpu, const Edges& e, bool package = true) {
    const auto at = [&](Clock::time_point t) { return package ? cpu.true_energy(t).first : cpu.true_energy(t).second; };
    return {at(e.before_end) - at(e.after_begin), at(e.after_end) - at(e.before_begin)};
}

// The counter's own step (RAPL moves about every millisecond) makes any
// reading, synchronous or sampled, up to one step of power stale, and the
// slope between two stepped readings off by as much again: per edge.
Joules step_slack(Watts power, std::chrono::nanoseconds step) { return 2 * 2 * power * step; }

void expect_within_bound(const EnergyValue& value, std::pair<Joules, Joules> truth, Joules slack,
                         const std::string& what) {
    ASSERT_FALSE(value.lost) << what << ": " << (value.warnings.empty() ? "" : value.warnings.front());
    ASSERT_TRUE(value.edge_error_bound.has_value()) << what;
    const Joules bound = *value.edge_error_bound + slack;
    EXPECT_GE(value.energy.count(), (truth.first - bound).count()) << what;
    EXPECT_LE(value.energy.count(), (truth.second + bound).count()) << what;
}

TEST(SampledPackageEdges, AreWithinTheirBoundAndCloseToTheTruthUnderSteadyLoad) {
    Gpus gpus = testing::fake_gpus(0);
    Cpus cpus = testing::fake_cpus(2);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    std::vector<double> errors;
    for (int round = 0; round < 10; ++round) {
        // Lengths off the watcher's 5 ms period, so that the two edges fall
        // at different times after a reading (what extrapolation corrects).
        Edges edges;
        const Measurement m = window(*monitor, 20ms + round * 1700us, edges);
        for (unsigned k = 0; k < 2; ++k) {
            const auto& cpu = testing::fake(cpus, k);
            const auto truth = package_truth(cpu, edges);
            expect_within_bound(m.cpu_energy.at(k), truth, Joules(0.0), "package " + std::to_string(k));
            expect_within_bound(m.dram_energy.at(k), package_truth(cpu, edges, false), Joules(0.0), "DRAM");
            const Joules middle = (truth.first + truth.second) * 0.5;
            errors.push_back(std::abs((m.cpu_energy.at(k).energy - middle).count()));
            // At most one read period (5 ms) plus scheduling old at each edge, at 300 W.
            EXPECT_LT(m.cpu_energy.at(k).edge_error_bound->count(), (2 * Watts(300.0) * 100ms).count());
        }
    }
    // Extrapolated with the power between readings, the edges are exact under
    // steady power; read without it, each edge would miss up to 5 ms × 100 W,
    // and the window the difference of the two misses (0.17 J on average).
    // The median leaves room for a preempted watcher.
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    EXPECT_LT(errors[errors.size() / 2], 0.05);
}

TEST(SampledPackageEdges, JustAfterALoadStepAreBounded) {
    Gpus gpus = testing::fake_gpus(0);
    Cpus cpus = testing::fake_cpus(1);
    auto& cpu = testing::fake(cpus, 0);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    for (auto before_end : {0us, 500us, 2000us, 4000us}) {
        cpu.draw(Watts(20.0), Watts(5.0));
        std::this_thread::sleep_for(20ms);  // the watcher's slope is 20 W again
        Edges edges;
        const Measurement m = window(*monitor, 30ms, edges, [&] {
            cpu.draw(Watts(290.0), Watts(55.0));
            std::this_thread::sleep_for(before_end);
        });
        const std::string what = "step " + std::to_string(before_end.count()) + " us before the end";
        expect_within_bound(m.cpu_energy.at(0), package_truth(cpu, edges), Joules(0.0), what);
        expect_within_bound(m.dram_energy.at(0), package_truth(cpu, edges, false), Joules(0.0), what + " (DRAM)");
    }
}

TEST(SampledPackageEdges, WithCountersMovingInRaplsMillisecondStepsAreWithinTheirBoundAndOneStep) {
    Gpus gpus = testing::fake_gpus(0);
    Cpus cpus = testing::fake_cpus(1);
    auto& cpu = testing::fake(cpus, 0);
    constexpr auto kStep = 1ms;
    cpu.update_every(kStep);
    cpu.draw(Watts(180.0), Watts(30.0));
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    for (int round = 0; round < 5; ++round) {
        Edges edges;
        const Measurement m = window(*monitor, 20ms + round * 1300us, edges);
        expect_within_bound(m.cpu_energy.at(0), package_truth(cpu, edges), step_slack(Watts(180.0), kStep), "package");
        expect_within_bound(m.dram_energy.at(0), package_truth(cpu, edges, false), step_slack(Watts(30.0), kStep),
                            "DRAM");
    }
}

TEST(SampledPackageEdges, NeverReadThePackagesOnTheCallersThread) {
    Gpus gpus = testing::fake_gpus(2);
    Cpus cpus = testing::fake_cpus(2);
    for (auto edges : {WindowEdges::Synchronous, WindowEdges::Sampled}) {
        EnergyMonitorOptions options;
        options.edges = edges;
        auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, options).value();
        const unsigned before = testing::fake(cpus, 0).reads_on(std::this_thread::get_id());
        for (int i = 0; i < 100; ++i) {
            ASSERT_TRUE(monitor->begin_window("w", false).ok());
            auto m = monitor->end_window("w", false).value();
            EXPECT_FALSE(m.cpu_energy.at(0).lost);
        }
        const unsigned reads = testing::fake(cpus, 0).reads_on(std::this_thread::get_id()) - before;
        EXPECT_EQ(reads, edges == WindowEdges::Sampled ? 0U : 200U);
    }
}

TEST(SampledPackageEdges, APackageLostMidWindowIsLostWithTheReasonAndTheOthersAreMeasured) {
    Gpus gpus = testing::fake_gpus(0);
    Cpus cpus = testing::fake_cpus(2);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    ASSERT_TRUE(monitor->begin_window("w", false).ok());
    testing::fake(cpus, 1).lose();
    std::this_thread::sleep_for(50ms);  // ten of the watcher's reads
    const Measurement m = monitor->end_window("w", false).value();
    EXPECT_FALSE(m.cpu_energy.at(0).lost);
    EXPECT_GT(m.cpu_energy.at(0).energy.count(), 0.0);
    for (const auto* values : {&m.cpu_energy, &m.dram_energy}) {
        const EnergyValue& lost = values->at(1);
        EXPECT_TRUE(lost.lost);
        EXPECT_EQ(lost.energy.count(), 0.0);
        ASSERT_EQ(lost.warnings.size(), 1U);
        EXPECT_NE(lost.warnings[0].find("could not be read at the end of the window"), std::string::npos)
            << lost.warnings[0];
        EXPECT_NE(lost.warnings[0].find("Input/output error"), std::string::npos) << lost.warnings[0];
    }
    EXPECT_FALSE(m.trustworthy());
    // Back: the next window measures it again.
    testing::fake(cpus, 1).recover();
    std::this_thread::sleep_for(20ms);
    Edges edges;
    const Measurement again = window(*monitor, 20ms, edges);
    expect_within_bound(again.cpu_energy.at(1), package_truth(testing::fake(cpus, 1), edges), Joules(0.0),
                        "recovered package");
}

TEST(SampledPackageEdges, APackageWithoutDramHasNoDramValue) {
    Gpus gpus = testing::fake_gpus(0);
    Cpus cpus = testing::fake_cpus(1, /*dram=*/false);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    Edges edges;
    const Measurement m = window(*monitor, 10ms, edges);
    EXPECT_EQ(m.cpu_energy.size(), 1U);
    EXPECT_TRUE(m.dram_energy.empty());
}

TEST(SampledSocEdges, AreThePowerOfEachMetricTimesTheWindowAndNeverReadOnTheCallersThread) {
    Gpus gpus = testing::fake_gpus(0);
    testing::FakeSoc soc;
    auto monitor = EnergyMonitor::open(gpus, nullptr, &soc, sampled()).value();
    Edges edges;
    const Measurement m = window(*monitor, 100ms, edges);
    EXPECT_EQ(soc.reads_on(std::this_thread::get_id()), 0U);
    ASSERT_EQ(m.soc_energy.size(), 3U);
    for (SocMetric metric : kSocMetrics) {
        const EnergyValue& value = m.soc_energy.at(std::string(to_string(metric)));
        EXPECT_EQ(value.source, EnergySource::IntegratedPower);
        const Joules least = soc.true_energy(metric, edges.before_end) - soc.true_energy(metric, edges.after_begin);
        const Joules most = soc.true_energy(metric, edges.after_end) - soc.true_energy(metric, edges.before_begin);
        // Steady power held to each edge is exact; 1% leaves room for the clocks.
        EXPECT_GE(value.energy.count(), least.count() * 0.99) << to_string(metric);
        EXPECT_LE(value.energy.count(), most.count() * 1.01) << to_string(metric);
    }
}

TEST(SampledEdges, GpusAndPackagesAreSampledTogether) {
    Gpus gpus = testing::fake_gpus(1);
    Cpus cpus = testing::fake_cpus(1);
    auto monitor = EnergyMonitor::open(gpus, &cpus, nullptr, sampled()).value();
    Edges edges;
    const Measurement m = window(*monitor, 120ms, edges);
    EXPECT_GT(testing::fake(gpus, 0).calls(testing::FakeGpu::Call::EnergySnapshot), 0U);
    EXPECT_FALSE(m.gpu_energy.at(0).lost);
    expect_within_bound(m.cpu_energy.at(0), package_truth(testing::fake(cpus, 0), edges), Joules(0.0), "package");
}

}  // namespace
}  // namespace zeus
