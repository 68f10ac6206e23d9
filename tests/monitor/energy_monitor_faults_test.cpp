// EnergyMonitor when a GPU or its energy counter misbehaves mid-window, on
// the GPU simulator (fault injection): a GPU lost for good or lost and back,
// and an energy counter that sticks or restarts. Each value must still be
// the ground truth (or say why not) and name what happened.
#include "monitor/energy_monitor_sim_fixture.hpp"

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace zeus {
namespace {

using namespace std::chrono_literals;
using testing::EnergyMonitorSim;

// What end_window warns with and total_energy reads (the GPU values' tally,
// taken here before the values: sampled edges tally the two frames on their
// own) must be what the values, built after, add up to, to the bit.
void expect_tally_of_the_values(const Measurement& m) {
    const auto tally = m.gpu_energy.tally();
    const auto of_values = EnergyTally<unsigned>::of(m.gpu_energy.map());
    EXPECT_EQ(tally.total.count(), of_values.total.count());
    EXPECT_EQ(tally.lost, of_values.lost);
    EXPECT_EQ(tally.measured_zero, of_values.measured_zero);
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
        expect_tally_of_the_values(m);
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
    const Measurement m =
        measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, false);
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
// `zeus run` read 3-4% high). The longest span around the edges includes the
// end edge's wait for a refresh (up to 400 ms, idle), which the value no
// longer counts: -2.4% to -5.2% against it (3 runs), so the number is
// printed too.
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

// The stuck-counter fallback against its healthy twin, as `zeus run -- sleep
// N` with `zeus-sim fault --gpu 0 stuck_counter 1` reports it: two identical
// GPUs (idle or under the same load), one counter stuck `stall` into a window
// of `length`, edges settled on the counters' refreshes. The stuck GPU's
// energy must be its ground truth within 2%: the twin's measured energy
// (its counter is healthy) scaled by the two GPUs' ground-truth ratio. The
// end edge once waited 400 ms for the stuck counter to refresh and then
// counted the power of that wait as well (+13% on a 3 s idle window).
struct StuckCase {
    double stall_s;
    double length_s;
    double utilization;  // 0: idle
};

class StuckCounterFallback : public EnergyMonitorSim, public ::testing::WithParamInterface<StuckCase> {};

TEST_P(StuckCounterFallback, MatchesTheGroundTruthAsZeusRunMeasuresIt) {
    const StuckCase c = GetParam();
    Gpus gpus = open_gpus();
    ASSERT_EQ(gpus.size(), 2U);
    EnergyMonitorOptions options;
    options.wait_for_counter_refresh = true;  // as `zeus run`
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, std::move(options)).value();
    std::vector<int> loads;
    for (unsigned g = 0; g < 2 && c.utilization > 0; ++g) {
        int load = -1;
        ASSERT_EQ(zeusSimLoadBegin(g, c.utilization, &load), ZEUS_SIM_OK);
        loads.push_back(load);
    }
    std::this_thread::sleep_for(1200ms);  // past the power sensor's ramp
    const auto begin = truth_around(2, [&] { ASSERT_TRUE(monitor->begin_window("run").ok()); });
    std::this_thread::sleep_for(std::chrono::duration<double>(c.stall_s));
    ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK);
    std::this_thread::sleep_for(std::chrono::duration<double>(c.length_s - c.stall_s));
    Measurement m;
    const auto end = truth_around(2, [&] { m = monitor->end_window("run").value(); });
    for (int load : loads) EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);

    const EnergyValue& stuck = m.gpu_energy.at(0);
    const EnergyValue& twin = m.gpu_energy.at(1);
    ASSERT_EQ(stuck.source, EnergySource::IntegratedPower) << stuck.energy.count();
    expect_energy_between(twin.energy.count(), begin, end, 1, 0.02);
    const double ratio = (end.after[0] - begin.before[0]) / (end.after[1] - begin.before[1]);
    const double expected = twin.energy.count() * ratio;
    std::printf("stuck %.1f s into %.1f s at %.0f%%: measured %.2f J, expected %.2f J (%+.2f%%)\n", c.stall_s,
                c.length_s, c.utilization * 100, stuck.energy.count(), expected,
                100.0 * (stuck.energy.count() - expected) / expected);
    EXPECT_NEAR(stuck.energy.count(), expected, 0.02 * expected);
}

INSTANTIATE_TEST_SUITE_P(StallsWindowsAndLoad, StuckCounterFallback,
                         ::testing::Values(StuckCase{0.5, 3.0, 0.0}, StuckCase{1.0, 3.0, 0.0}, StuckCase{2.0, 3.0, 0.0},
                                           StuckCase{1.0, 5.5, 0.0}, StuckCase{1.0, 3.0, 0.8}));

// A counter that turns NOT_SUPPORTED mid-window while the GPU still answers
// for its power is not a lost GPU: like a stuck counter, its energy from its
// last good read is the integrated power, and the value says why. Both edge
// modes share the fallback.
struct RefusedCase {
    WindowEdges edges;
    bool settle;
};

class CounterRefused : public CounterFault, public ::testing::WithParamInterface<RefusedCase> {};

TEST_P(CounterRefused, MidWindowFallsBackToPower) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "energy_not_supported", 1), ZEUS_SIM_OK); },
                                       false, GetParam().settle, GetParam().edges);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_FALSE(v.lost) << warnings_of(v);
    EXPECT_EQ(v.source, EnergySource::IntegratedPower);
    std::string warnings = warnings_of(v);
    std::transform(warnings.begin(), warnings.end(), warnings.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_NE(warnings.find("stopped answering"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("not supported"), std::string::npos) << warnings;  // the driver's reason
    EXPECT_TRUE(m.gpu_energy.at(1).warnings.empty()) << warnings_of(m.gpu_energy.at(1));
}

INSTANTIATE_TEST_SUITE_P(EveryEdgeMode, CounterRefused,
                         ::testing::Values(RefusedCase{WindowEdges::Synchronous, false},
                                           RefusedCase{WindowEdges::Synchronous, true},
                                           RefusedCase{WindowEdges::Sampled, false}));

TEST_F(CounterFault, CounterRestartMidWindowKeepsTheEnergyBeforeIt) {
    const Measurement m =
        measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK); }, false);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::HardwareCounter);
    EXPECT_NE(warnings_of(v).find("restarted"), std::string::npos) << warnings_of(v);
}

// With sampled edges the watch is fed by the edge sampler's reads (one
// thread for both): a stuck or restarted counter is handled as above.
TEST_F(CounterFault, CounterStuckMidWindowFallsBackToPowerWithSampledEdges) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "stuck_counter", 1), ZEUS_SIM_OK); }, false,
                                       false, WindowEdges::Sampled);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::IntegratedPower);
    EXPECT_NE(warnings_of(v).find("counter stopped"), std::string::npos) << warnings_of(v);
    EXPECT_TRUE(m.gpu_energy.at(1).warnings.empty()) << warnings_of(m.gpu_energy.at(1));
}

TEST_F(CounterFault, CounterRestartMidWindowKeepsTheEnergyBeforeItWithSampledEdges) {
    const Measurement m = measure_with([] { ASSERT_EQ(zeusSimInjectFault(0, "counter_reset", 0), ZEUS_SIM_OK); }, false,
                                       false, WindowEdges::Sampled);
    const EnergyValue& v = m.gpu_energy.at(0);
    EXPECT_EQ(v.source, EnergySource::HardwareCounter);
    EXPECT_NE(warnings_of(v).find("restarted"), std::string::npos) << warnings_of(v);
}

// A GPU that fails right before a window ends is lost for that window with
// either kind of edge, with the same provenance: lost, out of the total, the
// read error named. Sampled edges, first with the watcher stuck in a slow
// driver call on the other GPU (600 ms each, so the failing GPU's latest
// sample is older than its counter period allows: the edge must read it
// itself rather than extrapolate it; that GPU's counter is stuck, so the
// watcher probes it, and waits for it, in every round of reads), then with
// the watcher on time, once it has read the GPU after the failure (its latest
// read failed).
class DriverFailureAtTheEnd : public EnergyMonitorSim {
  protected:
    void SetUp() override {
        EnergyMonitorSim::SetUp();
        configure(R"({"gpus": [{"model": "H100-SXM5-80GB"},
                               {"model": "H100-SXM5-80GB", "faults": {"stuck_counter_after_s": 0},
                                "driver_latency_us": {"nvmlDeviceGetFieldValues": 600000}}]})");
    }
    // GPU 0 fails `wait` before the window (1 s, under load) ends.
    static Measurement fail_before_end(EnergyMonitor& monitor, std::chrono::milliseconds wait) {
        int load = -1;
        EXPECT_EQ(zeusSimLoadBegin(0, 0.8, &load), ZEUS_SIM_OK);
        EXPECT_TRUE(monitor.begin_window("failing").ok());
        std::this_thread::sleep_for(1s);
        EXPECT_EQ(zeusSimInjectFault(0, "lost", 1), ZEUS_SIM_OK) << zeusSimLastError();
        std::this_thread::sleep_for(wait);
        Measurement m = monitor.end_window("failing").value();
        EXPECT_EQ(zeusSimInjectFault(0, "lost", 0), ZEUS_SIM_OK);
        EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
        return m;
    }
    static void expect_lost_at_end(const Measurement& m) {
        expect_tally_of_the_values(m);
        const EnergyValue& lost = m.gpu_energy.at(0);
        EXPECT_TRUE(lost.lost) << lost.energy.count() << " J";
        EXPECT_EQ(lost.energy.count(), 0.0);
        EXPECT_EQ(lost.source, EnergySource::HardwareCounter);
        ASSERT_EQ(lost.warnings.size(), 1U);
        EXPECT_NE(lost.warnings.front().find("GPU 0 could not be read at the end of the window"), std::string::npos)
            << lost.warnings.front();
        EXPECT_NE(lost.warnings.front().find("GPU is lost"), std::string::npos) << lost.warnings.front();
        EXPECT_FALSE(m.gpu_energy.at(1).lost);
        EXPECT_DOUBLE_EQ(m.total_gpu_energy().count(), m.gpu_energy.at(1).energy.count());
    }
    static std::unique_ptr<EnergyMonitor> open_monitor(const Gpus& gpus, WindowEdges edges) {
        EnergyMonitorOptions options;
        options.edges = edges;
        return EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    }
};

TEST_F(DriverFailureAtTheEnd, SynchronousEdgeFindsTheGpuLost) {
    Gpus gpus = open_gpus();
    auto monitor = open_monitor(gpus, WindowEdges::Synchronous);
    expect_lost_at_end(fail_before_end(*monitor, 0ms));
}

TEST_F(DriverFailureAtTheEnd, SampledEdgeReadsAGpuTheStalledWatcherDidNotAndFindsItLost) {
    Gpus gpus = open_gpus();
    auto monitor = open_monitor(gpus, WindowEdges::Sampled);
    const Measurement m = fail_before_end(*monitor, 0ms);
    expect_lost_at_end(m);
    const std::string& why = m.gpu_energy.at(0).warnings.front();
    EXPECT_NE(why.find("late to read it at the end of the window"), std::string::npos) << why;
}

TEST_F(DriverFailureAtTheEnd, SampledEdgeAfterTheWatchersFailedReadIsLost) {
    configure(R"({"gpus": [{"model": "H100-SXM5-80GB"}, {"model": "H100-SXM5-80GB"}]})");
    Gpus gpus = open_gpus();
    auto monitor = open_monitor(gpus, WindowEdges::Sampled);
    // The watcher reads each GPU within 1 ms after each 100 ms refresh.
    expect_lost_at_end(fail_before_end(*monitor, 250ms));
}

}  // namespace
}  // namespace zeus
