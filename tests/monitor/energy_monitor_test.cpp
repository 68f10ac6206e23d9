// EnergyMonitor against the GPU simulator's ground-truth energy: the error of
// each measurement is computed, not assumed.
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/monitor/replay_monitor.hpp"

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include "instant_devices.hpp"
#include "support/sim_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <utility>

namespace zeus {
namespace {

using namespace std::chrono_literals;

// A fresh simulator per test (its own config and state file).
class EnergyMonitorSim : public testing::SimulatedGpus {
  protected:
    static Gpus open_gpus() { return Gpus::open(simulated()); }
    // The truth within the value's bound, give or take the counter's 1 mJ
    // resolution at each edge.
    static void expect_within_bound(const EnergyValue& v, const EdgeTruth& begin, const EdgeTruth& end, unsigned gpu) {
        const double bound = v.edge_error_bound.value_or(Joules(0.0)).count();
        EXPECT_GE(v.energy.count(), end.before[gpu] - begin.after[gpu] - bound - 0.002) << bound << " J";
        EXPECT_LE(v.energy.count(), end.after[gpu] - begin.before[gpu] + bound + 0.002) << bound << " J";
    }
};

// Counter-based windows of 1 s or longer are within 0.1% of ground truth.
TEST_F(EnergyMonitorSim, CounterWindowIsWithinATenthOfAPercentUnderSteadyLoad) {
    Gpus gpus = open_gpus();
    ASSERT_EQ(gpus.size(), 2U);
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(2, [&] { ASSERT_TRUE(monitor->begin_window("steady").ok()); });
    std::this_thread::sleep_for(1200ms);
    Measurement m;
    const auto end = truth_around(2, [&] { m = monitor->end_window("steady").value(); });
    EXPECT_GE(m.time.count(), 1.2);
    EXPECT_EQ(m.gpu_energy.at(0).source, EnergySource::HardwareCounter);
    expect_energy_between(m.gpu_energy.at(0).energy.count(), begin, end, 0, 0.001);
    expect_energy_between(m.gpu_energy.at(1).energy.count(), begin, end, 1, 0.001);
    EXPECT_TRUE(m.trustworthy());
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(EnergyMonitorSim, CounterWindowIsWithinATenthOfAPercentAcrossALoadStep) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.3, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(1, [&] { ASSERT_TRUE(monitor->begin_window("step").ok()); });
    std::this_thread::sleep_for(600ms);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK);  // the step, mid-window
    std::this_thread::sleep_for(700ms);
    Measurement m;
    const auto end = truth_around(1, [&] { m = monitor->end_window("step").value(); });
    expect_energy_between(m.gpu_energy.at(0).energy.count(), begin, end, 0, 0.001);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(EnergyMonitorSim, PreVoltaGpuIsMeasuredByIntegratingPower) {
    configure(R"({"gpus": [{"model": "P100-PCIE-16GB"}]})");
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.7, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(1, [&] { ASSERT_TRUE(monitor->begin_window("pascal").ok()); });
    std::this_thread::sleep_for(1000ms);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadBegin(0, 0.2, &load), ZEUS_SIM_OK);  // a step down mid-window
    std::this_thread::sleep_for(1000ms);
    Measurement m;
    const auto end = truth_around(1, [&] { m = monitor->end_window("pascal").value(); });
    EXPECT_EQ(m.gpu_energy.at(0).source, EnergySource::IntegratedPower);
    EXPECT_GT(m.gpu_energy.at(0).energy.count(), 0.0);  // the original reports 0 J for steady power here
    expect_energy_between(m.gpu_energy.at(0).energy.count(), begin, end, 0, 0.02);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

// Three pre-Volta GPUs on the real clock (their energy is integrated from the
// power monitor's timeline), one lost mid-window: the other two keep their
// energy (to the 2% of integrating the P100's 20 ms sensor), only the lost
// one is marked, with the cause, and it is left out of the total.
TEST_F(EnergyMonitorSim, PreVoltaGpuLostMidWindowLeavesTheOthersMeasured) {
    configure(R"({"gpus": [{"model": "P100-PCIE-16GB"}, {"model": "P100-PCIE-16GB"}, {"model": "P100-PCIE-16GB"}]})");
    Gpus gpus = open_gpus();
    ASSERT_EQ(gpus.size(), 3U);
    ASSERT_FALSE(gpus[1].capabilities().energy_counter.supported);
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    int load0 = -1;
    int load2 = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &load0), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadBegin(2, 0.4, &load2), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(3, [&] { ASSERT_TRUE(monitor->begin_window("lossy").ok()); });
    std::this_thread::sleep_for(700ms);
    ASSERT_EQ(zeusSimInjectFault(1, "lost", 1), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(800ms);  // past the power monitor's few periods of tolerated failures
    // The truth of GPUs 0 and 2 around the end (GPU 1's is not asked of a lost GPU).
    SimulatedGpus::EdgeTruth end;
    for (const unsigned g : {0U, 1U, 2U}) end.before.push_back(g == 1 ? 0.0 : truth(g));
    const Measurement m = monitor->end_window("lossy").value();
    for (const unsigned g : {0U, 1U, 2U}) end.after.push_back(g == 1 ? 0.0 : truth(g));
    EXPECT_EQ(zeusSimLoadEnd(load0), ZEUS_SIM_OK);
    EXPECT_EQ(zeusSimLoadEnd(load2), ZEUS_SIM_OK);
    ASSERT_EQ(m.gpu_energy.size(), 3U);
    for (const unsigned g : {0U, 2U}) {
        const EnergyValue& v = m.gpu_energy.at(g);
        SCOPED_TRACE("GPU " + std::to_string(g));
        EXPECT_FALSE(v.lost);
        EXPECT_EQ(v.source, EnergySource::IntegratedPower);
        EXPECT_TRUE(v.warnings.empty()) << v.warnings.front();
        expect_energy_between(v.energy.count(), begin, end, g, 0.02);
    }
    const EnergyValue& lost = m.gpu_energy.at(1);
    EXPECT_TRUE(lost.lost);
    ASSERT_EQ(lost.warnings.size(), 1U);
    EXPECT_NE(lost.warnings.front().find("GPU 1"), std::string::npos) << lost.warnings.front();
    EXPECT_NE(lost.warnings.front().find("lost"), std::string::npos) << lost.warnings.front();
    EXPECT_DOUBLE_EQ(m.total_gpu_energy().count(),
                     m.gpu_energy.at(0).energy.count() + m.gpu_energy.at(2).energy.count());
    EXPECT_FALSE(m.trustworthy());
    EXPECT_EQ(zeusSimInjectFault(1, "lost", 0), ZEUS_SIM_OK);
}

// A pre-Volta GPU on the simulator's virtual clock: time jumps while the
// work runs, so no thread could sample the power meanwhile. Energy must still
// be the trace's power × time, for steady work and across power steps.
class PreVoltaVirtualClock : public EnergyMonitorSim {
  protected:
    static constexpr double kLimits[] = {125.0, 200.0, 250.0};
    static constexpr double kEpochSeconds[] = {20.0, 12.0, 10.0};
    static constexpr double kPowers[] = {110.0, 170.0, 215.0};
    // P100: a power reading every 20 ms with 0.5 W of noise (docs/simulator.md).
    static constexpr double kSensorPeriod = 0.020;
    static constexpr double kNoise = 0.5;

    void SetUp() override {
        EnergyMonitorSim::SetUp();
        configure(R"({"clock": "virtual", "gpus": [{"model": "P100-PCIE-16GB"}]})");
        gpus_ = open_gpus();
        ASSERT_EQ(gpus_.size(), 1U);
        ASSERT_FALSE(gpus_[0].capabilities().energy_counter.supported);
        ASSERT_EQ(zeusSimTraceProfileDefine("steps", 3, kLimits, kEpochSeconds, kPowers, &profile_), ZEUS_SIM_OK)
            << zeusSimLastError();
        monitor_ = EnergyMonitor::open(gpus_, nullptr, nullptr).value();
    }
    // Runs `epochs` of the trace at trace row `row`; returns its energy by the trace.
    double run(std::size_t row, double epochs) {
        EXPECT_TRUE(gpus_[0].set_power_limit(Milliwatts(static_cast<std::int64_t>(kLimits[row] * 1000))).ok());
        double elapsed = 0;
        EXPECT_EQ(zeusSimRunTraceWork(0, profile_, epochs, &elapsed), ZEUS_SIM_OK) << zeusSimLastError();
        EXPECT_NEAR(elapsed, epochs * kEpochSeconds[row], 1e-6);
        seconds_ += elapsed;
        return kPowers[row] * elapsed;
    }
    // Integrating readings is off by at most one sensor period of each power
    // change (the reading that first shows it averages part of each side),
    // the two edges likewise, and the noise: 6σ of its sum over the readings.
    double bound(std::size_t steps, double max_step_w) const {
        const double readings = seconds_ / kSensorPeriod;
        return static_cast<double>(steps + 2) * max_step_w * kSensorPeriod + 6 * kNoise * kSensorPeriod * std::sqrt(readings);
    }

    Gpus gpus_;
    int profile_ = -1;
    std::unique_ptr<EnergyMonitor> monitor_;
    double seconds_ = 0;
};

TEST_F(PreVoltaVirtualClock, SteadyWorkIsTheTracesPowerTimesTime) {
    ASSERT_TRUE(monitor_->begin_window("steady").ok());
    const double expected = run(2, 0.5);  // 5 s at 215 W
    const Measurement m = monitor_->end_window("steady").value();
    EXPECT_NEAR(m.time.count(), seconds_, 1e-6);
    EXPECT_EQ(m.gpu_energy.at(0).source, EnergySource::IntegratedPower);
    EXPECT_NEAR(m.gpu_energy.at(0).energy.count(), expected, bound(0, kPowers[2]));
    EXPECT_TRUE(m.trustworthy());
}

TEST_F(PreVoltaVirtualClock, SteppedWorkIsTheTracesPowerTimesTime) {
    ASSERT_TRUE(monitor_->begin_window("stepped").ok());
    double expected = 0;
    expected += run(2, 0.2);   // 2 s at 215 W
    expected += run(0, 0.1);   // 2 s at 110 W
    expected += run(1, 0.25);  // 3 s at 170 W
    expected += run(2, 0.3);   // 3 s at 215 W
    const Measurement m = monitor_->end_window("stepped").value();
    EXPECT_NEAR(m.time.count(), seconds_, 1e-6);
    EXPECT_NEAR(m.gpu_energy.at(0).energy.count(), expected, bound(3, kPowers[2] - kPowers[0]));
    // Windows that nest see their own share.
    ASSERT_TRUE(monitor_->begin_window("outer").ok());
    seconds_ = 0;
    const double first = run(0, 0.1);
    ASSERT_TRUE(monitor_->begin_window("inner").ok());
    const double second = run(2, 0.2);
    const Measurement inner = monitor_->end_window("inner").value();
    const Measurement outer = monitor_->end_window("outer").value();
    EXPECT_NEAR(inner.gpu_energy.at(0).energy.count(), second, bound(1, kPowers[2] - kPowers[0]));
    EXPECT_NEAR(outer.gpu_energy.at(0).energy.count(), first + second, bound(1, kPowers[2] - kPowers[0]));
}

// A GPU lost for about a second inside a window and back before it ends: its
// counter kept counting, so the energy is still the ground truth, but the
// window says the GPU was lost and came back (issue 24); the other GPU has
// no such warning, and a window after the outage has none either.
TEST_F(EnergyMonitorSim, AGpuLostAndBackInsideAWindowIsWarnedAbout) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(1, 0.8, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(300ms);
    const auto begin = truth_around(2, [&] { ASSERT_TRUE(monitor->begin_window("outage").ok()); });
    std::this_thread::sleep_for(500ms);
    ASSERT_EQ(zeusSimInjectFault(1, "lost", 1), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(1000ms);
    ASSERT_EQ(zeusSimInjectFault(1, "lost", 0), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(500ms);
    Measurement m;
    const auto end = truth_around(2, [&] { m = monitor->end_window("outage").value(); });
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
    const EnergyValue& back = m.gpu_energy.at(1);
    EXPECT_FALSE(back.lost);
    expect_energy_between(back.energy.count(), begin, end, 1, 0.001);
    std::string warnings;
    for (const auto& w : back.warnings) warnings += w + "\n";
    EXPECT_NE(warnings.find("GPU 1 stopped answering once during the window"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("came back"), std::string::npos) << warnings;
    EXPECT_TRUE(m.gpu_energy.at(0).warnings.empty());

    ASSERT_TRUE(monitor->begin_window("after").ok());
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(monitor->end_window("after").value().gpu_energy.at(1).warnings.empty());
}

// Faults of the energy counter during a 3 s window under steady load: the
// energy must still be the ground truth (to the accuracy of integrating
// the A100's part-time power sensor, 2%), and the value must say what
// happened. `fault` runs 1.5 s into the window (or before it begins).
class CounterFault : public EnergyMonitorSim {
  protected:
    // settle: wait for the counter's refresh at each edge, as `zeus run`
    // does (the Python monitor's default does not): both must be within 2%.
    Measurement measure_with(const std::function<void()>& fault, bool before_begin, bool settle = false,
                             WindowEdges edges = WindowEdges::Synchronous) {
        Gpus gpus = open_gpus();
        EnergyMonitorOptions options;
        options.wait_for_counter_refresh = settle;
        options.edges = edges;
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, std::move(options)).value();
        int load = -1;
        EXPECT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
        std::this_thread::sleep_for(1200ms);
        if (before_begin) fault();
        const auto begin = truth_around(1, [&] { EXPECT_TRUE(monitor->begin_window("faulty").ok()); });
        std::this_thread::sleep_for(1500ms);
        if (!before_begin) fault();
        // The window ends about 90 ms after one of the watch's reads (every
        // 100 ms from the window's begin): a stand-in energy that stopped at
        // the watch's last read would be 3 % short.
        std::this_thread::sleep_for(1490ms);
        Measurement m;
        const auto end = truth_around(1, [&] { m = monitor->end_window("faulty").value(); });
        EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
        expect_energy_between(m.gpu_energy.at(0).energy.count(), begin, end, 0, 0.02);
        return m;
    }
    static std::string warnings_of(const EnergyValue& v) {
        std::string all;
        for (const auto& w : v.warnings) all += w + "\n";
        return all;
    }
};

TEST_F(CounterFault, CounterStuckMidWindowFallsBackToPower) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, false);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::IntegratedPower);
    EXPECT_NE(warnings_of(v).find("counter stopped"), std::string::npos) << warnings_of(v);
    EXPECT_TRUE(m.gpu_energy.at(1).warnings.empty()) << warnings_of(m.gpu_energy.at(1));  // the healthy GPU
}

TEST_F(CounterFault, CounterStuckFromTheStartFallsBackToPower) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, true);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::IntegratedPower);
    EXPECT_NE(warnings_of(v).find("counter stopped"), std::string::npos) << warnings_of(v);
    EXPECT_EQ(warnings_of(v).find("shorter than"), std::string::npos) << warnings_of(v);
}

TEST_F(CounterFault, CounterStuckMidWindowWithSettledEdgesAsZeusRun) {
    const Measurement m =
        measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, false, true);
    EXPECT_EQ(m.gpu_energy.at(0).source, EnergySource::IntegratedPower);
}

TEST_F(CounterFault, CounterStuckFromTheStartWithSettledEdgesAsZeusRun) {
    const Measurement m =
        measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, true, true);
    EXPECT_EQ(m.gpu_energy.at(0).source, EnergySource::IntegratedPower);
}

// As under `zeus run -- CMD`: the load stops just before the window ends
// (the command exits), with the counter stuck since mid-window. The power
// sensor lags the load by up to its 100 ms period; the stand-in energy must
// not carry the load past its end by more than the documented 2% (issue 24:
// `zeus run` read 3-4% high). Measured here: +0.6 to +0.9% against the
// longest span around the edges (4 runs), so the number is printed too.
TEST_F(CounterFault, CounterStuckWhenTheLoadStopsJustBeforeTheEnd) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.wait_for_counter_refresh = true;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, std::move(options)).value();
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(1200ms);
    const auto begin = truth_around(1, [&] { EXPECT_TRUE(monitor->begin_window("faulty").ok()); });
    std::this_thread::sleep_for(1500ms);
    ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK);
    std::this_thread::sleep_for(1490ms);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
    std::this_thread::sleep_for(10ms);
    Measurement m;
    const auto end = truth_around(1, [&] { m = monitor->end_window("faulty").value(); });
    const double truth = end.after.at(0) - begin.before.at(0);  // the longest span
    std::printf("stuck counter, load stopped 10 ms before the end: measured %.2f J, truth %.2f J (%+.2f%%)\n",
                m.gpu_energy.at(0).energy.count(), truth, 100.0 * (m.gpu_energy.at(0).energy.count() - truth) / truth);
    expect_energy_between(m.gpu_energy.at(0).energy.count(), begin, end, 0, 0.02);
}

TEST_F(CounterFault, CounterRestartMidWindowKeepsTheEnergyBeforeIt) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK); }, false);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::HardwareCounter);
    EXPECT_NE(warnings_of(v).find("restarted"), std::string::npos) << warnings_of(v);
}

// With sampled edges the watch is fed by the edge sampler's reads (one
// thread for both): a stuck or restarted counter is handled as above.
TEST_F(CounterFault, CounterStuckMidWindowFallsBackToPowerWithSampledEdges) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); },
                                       false, false, WindowEdges::Sampled);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::IntegratedPower);
    EXPECT_NE(warnings_of(v).find("counter stopped"), std::string::npos) << warnings_of(v);
    EXPECT_TRUE(m.gpu_energy.at(1).warnings.empty()) << warnings_of(m.gpu_energy.at(1));
}

TEST_F(CounterFault, CounterRestartMidWindowKeepsTheEnergyBeforeItWithSampledEdges) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK); },
                                       false, false, WindowEdges::Sampled);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::HardwareCounter);
    EXPECT_NE(warnings_of(v).find("restarted"), std::string::npos) << warnings_of(v);
}

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

TEST_F(EnergyMonitorSim, WindowShorterThanTheCounterPeriodIsFlagged) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    ASSERT_TRUE(monitor->begin_window("blink").ok());
    std::this_thread::sleep_for(5ms);
    const Measurement m = monitor->end_window("blink").value();
    ASSERT_FALSE(m.gpu_energy.at(0).warnings.empty());
    EXPECT_NE(m.gpu_energy.at(0).warnings.front().find("update period"), std::string::npos);
    EXPECT_FALSE(m.trustworthy());
}

TEST_F(EnergyMonitorSim, ApproxInstantEnergyReplacesZeros) {
    configure(R"({"gpus": [{"model": "A100-SXM4-40GB", "counters": {"energy_period_ms": 1000}}]})");
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.approx_instant_energy = true;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    // A counter that refreshes once a second, without a refresh time to
    // interpolate: read it through the plain call by asking right after a
    // refresh is impossible here, so a 20 ms window usually reads 0 J.
    ASSERT_TRUE(monitor->begin_window("tiny").ok());
    std::this_thread::sleep_for(20ms);
    const Measurement m = monitor->end_window("tiny").value();
    const EnergyValue& v = m.gpu_energy.at(0);
    if (v.source == EnergySource::InstantPowerApproximation) {
        double p = 0;
        ASSERT_EQ(zeusSimTruePower(0, &p), ZEUS_SIM_OK);
        EXPECT_NEAR(v.energy.count(), p * m.time.count(), 0.2 * p * m.time.count());
    }
    EXPECT_GT(v.energy.count(), 0.0);
    EXPECT_FALSE(v.warnings.empty());
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

// A GPU whose every read is counted per thread: a steady 300 W whose energy
// counter refreshes every 20 ms, with the refresh time and power in each
// snapshot, like NVML's field values.
class CountingGpu final : public bench::InstantGpu {
  public:
    static constexpr double kWatts = 300.0;
    static constexpr auto kRefresh = std::chrono::milliseconds(20);
    CountingGpu(unsigned index, std::thread::id watched, std::atomic<int>& calls)
        : InstantGpu(index), watched_(watched), calls_(calls), origin_(std::chrono::system_clock::now()) {}
    Result<EnergySnapshot> energy_snapshot() const override {
        count();
        const auto now = std::chrono::system_clock::now();
        const auto refreshed = origin_ + (now - origin_) / kRefresh * kRefresh;
        const double joules = kWatts * Seconds(refreshed - origin_).count();
        return EnergySnapshot{Millijoules(static_cast<std::int64_t>(joules * 1000)), refreshed,
                              Milliwatts(static_cast<std::int64_t>(kWatts * 1000))};
    }
    Result<Millijoules> total_energy() const override { return energy_snapshot().value().energy; }
    Result<PowerReading> power(PowerDomain) const override {
        count();
        return PowerReading{Milliwatts(static_cast<std::int64_t>(kWatts * 1000)), std::nullopt};
    }

  private:
    void count() const {
        if (std::this_thread::get_id() == watched_) ++calls_;
    }
    std::thread::id watched_;
    std::atomic<int>& calls_;
    std::chrono::system_clock::time_point origin_;
};

// Driver reads on the caller's thread for 50 windows of 8 GPUs, in each mode;
// `median_error_w`: of |energy / time − 300 W| over the windows (the median:
// a preemption between an edge's wall and steady clock reads skews one window).
static int caller_reads(WindowEdges edges, double& median_error_w) {
    std::atomic<int> calls{0};
    std::vector<std::unique_ptr<Gpu>> list;
    for (unsigned i = 0; i < 8; ++i) list.push_back(std::make_unique<CountingGpu>(i, std::this_thread::get_id(), calls));
    Gpus gpus(std::move(list), {}, {}, GpuBackendInfo{});
    EnergyMonitorOptions options;
    options.edges = edges;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    (void)monitor->begin_window("warm-up", false);  // starts the watchers
    calls = 0;
    std::vector<double> errors;
    for (int w = 0; w < 50; ++w) {
        EXPECT_TRUE(monitor->begin_window("w", false).ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(3 + w % 7));
        const Measurement m = monitor->end_window("w", false).value();
        for (const auto& [i, v] : m.gpu_energy) {
            // Steady power: energy / time is the power, to the edges' clock reads
            // and the counter's 1 mJ steps.
            errors.push_back(std::abs(v.energy.count() / m.time.count() - CountingGpu::kWatts));
        }
    }
    monitor->stop_threads();
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    median_error_w = errors[errors.size() / 2];
    return calls.load();
}

TEST(SampledEdges, NeverCallTheDriverOnTheCallersThread) {
    double error_w = 0;
    EXPECT_EQ(caller_reads(WindowEdges::Sampled, error_w), 0);
    EXPECT_LT(error_w, 1.0);  // W, over windows of 3–9 ms
    // The synchronous edges read each GPU at each edge: the count can fail.
    EXPECT_EQ(caller_reads(WindowEdges::Synchronous, error_w), 50 * 2 * 8);
}

// Sampled edges leave the GPU values to be computed when first read: the
// result must not depend on the monitor (gone by then), must equal what the
// window measured, and must be computed once for every copy and thread.
TEST(SampledEdges, ResultIsComputedOnFirstReadEvenAfterTheMonitorIsGone) {
    std::atomic<int> calls{0};
    std::vector<std::unique_ptr<Gpu>> list;
    for (unsigned i = 0; i < 4; ++i) list.push_back(std::make_unique<CountingGpu>(i, std::this_thread::get_id(), calls));
    Gpus gpus(std::move(list), {}, {}, GpuBackendInfo{});
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    Measurement m;
    {
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
        ASSERT_TRUE(monitor->begin_window("w", false).ok());
        std::this_thread::sleep_for(150ms);
        m = monitor->end_window("w", false).value();
        EXPECT_TRUE(m.gpu_energy.pending());  // end_window computed no GPU value
    }
    const Measurement copy = m;
    std::vector<std::thread> readers;
    std::vector<double> totals(4);
    for (std::size_t t = 0; t < totals.size(); ++t) {
        readers.emplace_back([&, t] { totals[t] = (t % 2 == 0 ? m : copy).total_gpu_energy().count(); });
    }
    for (auto& r : readers) r.join();
    EXPECT_FALSE(m.gpu_energy.pending());
    EXPECT_EQ(calls.load(), 0);  // nor did reading them call the driver
    ASSERT_EQ(m.gpu_energy.size(), 4U);
    for (const auto& [i, v] : std::as_const(m).gpu_energy) {
        EXPECT_EQ(v.source, EnergySource::HardwareCounter);
        EXPECT_NEAR(v.energy.count() / m.time.count(), CountingGpu::kWatts, 3.0) << "GPU " << i;
        EXPECT_EQ(&v, &copy.gpu_energy.at(i));  // copies share the values computed once
    }
    for (double total : totals) EXPECT_EQ(total, totals.front());
    // A non-const access takes its own copy: changing it leaves the others alone.
    Measurement changed = copy;
    changed.gpu_energy.at(0).energy = Joules(-1.0);
    EXPECT_NE(m.gpu_energy.at(0).energy.count(), -1.0);
}

TEST(EnergyValues, PlainMapsConvertAndBehaveAsBefore) {
    EnergyValues<unsigned> values = std::map<unsigned, EnergyValue>{{3, EnergyValue{Joules(2.0), EnergySource::HardwareCounter, {}}}};
    EXPECT_FALSE(values.pending());
    values[1] = EnergyValue{Joules(1.0), EnergySource::HardwareCounter, {}};
    const std::map<unsigned, EnergyValue>& as_map = values;
    EXPECT_EQ(as_map.size(), 2U);
    EXPECT_EQ(as_map.begin()->first, 1U);
    int computed = 0;
    auto deferred = EnergyValues<unsigned>::deferred([&computed] {
        ++computed;
        return std::map<unsigned, EnergyValue>{{7, EnergyValue{Joules(5.0), EnergySource::HardwareCounter, {}}}};
    });
    EXPECT_TRUE(deferred.pending());
    EXPECT_EQ(computed, 0);
    EXPECT_TRUE(deferred.contains(7));
    EXPECT_EQ(deferred.at(7).energy.count(), 5.0);
    EXPECT_EQ(deferred.size(), 1U);
    EXPECT_EQ(computed, 1);
}

}  // namespace
}  // namespace zeus
