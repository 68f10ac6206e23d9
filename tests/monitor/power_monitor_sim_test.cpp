// PowerMonitor against the GPU simulator on the real clock (the monitor
// samples in real time). Accuracy tests compare with the simulator's exact
// ground-truth energy; their tolerances come from the sensor physics in
// docs/simulator.md, not from fudge factors. Errors, failed reads and the
// thread's life over fake GPUs: power_monitor_test.cpp.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "monitor/monitor_helpers.hpp"
#include "support/sim_fixture.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using testing::power_options;
using testing::SimulatedGpus;

// Tesla P100 (pre-Volta: no energy counter, so the EnergyMonitor integrates
// this monitor's power). Its instant power sensor refreshes every T = 20 ms
// and averages the last W = 10 ms, with 0.5 W (σ) of noise.
constexpr const char* kP100 = R"({"gpus": [{"model": "P100-PCIE-16GB"}]})";
constexpr double kP100PeriodS = 0.020;
constexpr double kNoiseSigmaW = 0.5;
// Shared by every preset: leakage 0.4 W/°C, thermal resistance 0.1 °C/W,
// time constant 20 s.
constexpr double kLeakWPerC = 0.4;
constexpr double kThermalResistance = 0.1;
constexpr double kTimeConstantS = 20.0;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

double true_power(unsigned gpu) {
    double w = 0;
    EXPECT_EQ(zeusSimTruePower(gpu, &w), ZEUS_SIM_OK) << zeusSimLastError();
    return w;
}

void report(double measured_j, double truth_j, double tolerance_j) {
    std::printf("measured %.3f J, truth %.3f J, error %+.3f J (%+.3f %%), physics bound %.3f J\n", measured_j,
                truth_j, measured_j - truth_j, 100 * (measured_j - truth_j) / truth_j, tolerance_j);
}

// A point in time on both clocks: the steady clock (what the monitor uses)
// and the simulator's ground-truth energy, read between two clock reads.
struct Mark {
    Timestamp time;
    double joules;
    double skew_s;  // the truth was taken within ±skew_s of `time`
};

class PowerMonitorTest : public SimulatedGpus {
  protected:
    Mark mark(unsigned gpu) {
        const Timestamp before = MonitorClock::now();
        const double j = truth(gpu);
        const Timestamp after = MonitorClock::now();
        return {before + (after - before) / 2, j, seconds(after - before) / 2};
    }

    static std::unique_ptr<PowerMonitor> start(const Gpus& gpus, PowerMonitorOptions options = {}) {
        return testing::started(PowerMonitor::start(gpus, std::move(options)));
    }

    // Error bound of an integrated power window on a sensor with period T:
    // - noise: each reading's noise is held for one period (two when the
    //   monitor misses a refresh), independent from reading to reading: 6σ of
    //   the sum;
    // - a step of `step_w` is seen at most one period after it happens
    //   (the first refresh whose window lies after it), plus one more
    //   period if the monitor misses that refresh;
    // - slow drift (leakage as the die heats, at most k·R·P/τ watts per
    //   second) is seen up to two periods late;
    // - the ground truth was read within ±skew of each window end.
    static double bound(double window_s, double period_s, double step_w, double max_power_w, double skew_s) {
        const double held = 2 * period_s;
        const double noise = 6 * kNoiseSigmaW * held * std::sqrt(window_s / period_s);
        const double step = step_w * 2 * period_s;
        const double drift = kLeakWPerC * kThermalResistance * max_power_w / kTimeConstantS * held * window_s;
        return noise + step + drift + max_power_w * skew_s;
    }
};

TEST_F(PowerMonitorTest, InfersHalfTheSensorPeriod) {
    configure(R"({"gpus": [{"model": "P100-PCIE-16GB"}, {"model": "A100-SXM4-40GB"},
                           {"model": "A40", "counters": {"power_period_ms": 1000, "power_window_ms": 1000}}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 3U);
    // P100: T = 20 ms; A100: T = 100 ms (refresh times make the interval exact).
    EXPECT_EQ(infer_counter_update_period(gpus[0], PowerDomain::DeviceInstant).value(), 10ms);
    EXPECT_EQ(infer_counter_update_period(gpus[1], PowerDomain::DeviceInstant).value(), 50ms);
    // A sensor slower than the 0.1 s cap: never slower than 0.1 s.
    EXPECT_LE(infer_counter_update_period(gpus[2], PowerDomain::DeviceInstant).value(), 100ms);
    // The monitor takes the fastest model.
    auto monitor = start(gpus, power_options(std::nullopt, {}, {1, 0}));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->update_period(), 10ms);
    EXPECT_EQ(monitor->gpu_indices(), (std::vector<unsigned>{1, 0}));
}

TEST_F(PowerMonitorTest, SteadyLoadEnergyMatchesGroundTruth) {
    configure(kP100);
    Gpus gpus = Gpus::open(simulated());
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
    auto monitor = start(gpus);  // inferred period, every supported domain
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->update_period(), 10ms);
    std::this_thread::sleep_for(100ms);  // past the sensor window that still saw the idle GPU

    const Mark m0 = mark(0);
    std::this_thread::sleep_for(2s);
    const Mark m1 = mark(0);
    const double truth_j = m1.joules - m0.joules;
    const double window_s = seconds(m1.time - m0.time);
    const double p = true_power(0);
    const Joules measured = monitor->energy(m0.time, m1.time).value().at(0);
    const double tolerance = bound(window_s, kP100PeriodS, 0.0, p, m0.skew_s + m1.skew_s);
    report(measured.count(), truth_j, tolerance);
    EXPECT_NEAR(measured.count(), truth_j, tolerance) << "window " << window_s << " s at " << p << " W";
    EXPECT_LT(std::abs(measured.count() - truth_j) / truth_j, 0.02);
    const MonitorStats stats = monitor->stats();
    EXPECT_EQ(stats.failed_reads, 0U) << (stats.last_error ? stats.last_error->describe() : "");
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(PowerMonitorTest, LoadStepInTheMiddleOfTheWindowMatchesGroundTruth) {
    configure(kP100);
    Gpus gpus = Gpus::open(simulated());
    auto monitor = start(gpus, power_options(std::nullopt, {PowerDomain::DeviceInstant}));
    ASSERT_NE(monitor, nullptr);
    std::this_thread::sleep_for(50ms);

    const Mark m0 = mark(0);
    const double idle_w = true_power(0);
    std::this_thread::sleep_for(1500ms);
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 1.0, &load), ZEUS_SIM_OK) << zeusSimLastError();
    const Timestamp step_time = MonitorClock::now();
    std::this_thread::sleep_for(1500ms);
    const Mark m1 = mark(0);
    const double busy_w = true_power(0);
    const double truth_j = m1.joules - m0.joules;
    const double window_s = seconds(m1.time - m0.time);
    const Joules measured = monitor->energy(m0.time, m1.time).value().at(0);
    const double tolerance = bound(window_s, kP100PeriodS, busy_w - idle_w, busy_w, m0.skew_s + m1.skew_s);
    report(measured.count(), truth_j, tolerance);
    EXPECT_NEAR(measured.count(), truth_j, tolerance)
        << "window " << window_s << " s, step " << idle_w << " -> " << busy_w << " W";
    EXPECT_LT(std::abs(measured.count() - truth_j) / truth_j, 0.02);

    // The timeline shows the step within a sensor period (two if a refresh
    // was missed), and power(at) answers with the value in force.
    const auto before = monitor->power(step_time - 100ms).value().at(0);
    const auto after = monitor->power(step_time + 100ms).value().at(0);
    EXPECT_NEAR(before.count(), idle_w, 3.0);
    EXPECT_NEAR(after.count(), busy_w, 3.0);
    auto timeline = monitor->power_timeline(0).value();
    auto first_busy = std::find_if(timeline.begin(), timeline.end(),
                                   [&](const PowerSample& s) { return s.power.count() > (idle_w + busy_w) / 2; });
    ASSERT_NE(first_busy, timeline.end());
    EXPECT_LE(seconds(first_busy->time - step_time), 2 * kP100PeriodS + 0.001);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(PowerMonitorTest, SteadyPowerIsStoredOnceAndStillIntegratesExactly) {
    // No noise and no leakage: the sensor shows one constant value, refreshed
    // every 20 ms. The original stores it once and then integrates 0 J
    // (trapezoids need two samples); this monitor holds it.
    configure(R"({"gpus": [{"model": "P100-PCIE-16GB", "counters": {"power_noise_w": 0},
                            "power": {"leakage_w_per_c": 0}}]})");
    Gpus gpus = Gpus::open(simulated());
    int load = -1;
    ASSERT_EQ(zeusSimLoadBegin(0, 0.5, &load), ZEUS_SIM_OK) << zeusSimLastError();
    std::this_thread::sleep_for(50ms);  // every sensor window after the load began
    auto monitor = start(gpus, power_options(10ms, {PowerDomain::DeviceInstant}));
    ASSERT_NE(monitor, nullptr);
    const Mark m0 = mark(0);
    std::this_thread::sleep_for(2s);
    const Mark m1 = mark(0);
    const MonitorStats stats = monitor->stats();
    EXPECT_GE(stats.sweeps, 100U);  // ~200 polls of ~100 refreshes...
    EXPECT_EQ(monitor->power_timeline(0).value().size(), 1U);  // ...stored once
    EXPECT_EQ(stats.stored_samples, 1U);
    const double p = true_power(0);
    const double truth_j = m1.joules - m0.joules;
    const Joules measured = monitor->energy(m0.time, m1.time).value().at(0);
    // Only the 1 mW resolution of the reading and the truth's clock skew remain.
    EXPECT_NEAR(measured.count(), truth_j, 0.001 * seconds(m1.time - m0.time) + p * (m0.skew_s + m1.skew_s) + 1e-6);
    EXPECT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(PowerMonitorTest, AllThreeDomainsOnH100) {
    configure(R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 2}]})");
    Gpus gpus = Gpus::open(simulated());
    auto monitor = start(gpus, power_options(20ms));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->domains(), (std::vector<PowerDomain>{PowerDomain::DeviceInstant, PowerDomain::DeviceAverage,
                                                            PowerDomain::MemoryAverage}));
    std::this_thread::sleep_for(150ms);
    const auto all = monitor->all_power_timelines();
    ASSERT_EQ(all.size(), 3U);
    for (const auto& [domain, by_gpu] : all) {
        ASSERT_EQ(by_gpu.size(), 2U) << to_string(domain);
        for (const auto& [gpu, samples] : by_gpu) {
            EXPECT_FALSE(samples.empty()) << to_string(domain) << " GPU " << gpu;
            EXPECT_TRUE(std::is_sorted(samples.begin(), samples.end(),
                                       [](const PowerSample& a, const PowerSample& b) { return a.time < b.time; }));
        }
    }
    const auto device = monitor->power(std::nullopt, PowerDomain::DeviceAverage).value();
    const auto memory = monitor->power(std::nullopt, PowerDomain::MemoryAverage).value();
    for (unsigned gpu : {0U, 1U}) {
        EXPECT_GT(memory.at(gpu).count(), 0.0);
        EXPECT_LT(memory.at(gpu).count(), device.at(gpu).count());
    }
    const Timestamp now = MonitorClock::now();
    EXPECT_EQ(monitor->energy(now - 100ms, now, PowerDomain::MemoryAverage).value().size(), 2U);
}

}  // namespace
}  // namespace zeus
