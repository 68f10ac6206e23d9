// The engine over the real NVML backend and the GPU simulator's processes:
// the backend's process calls (GpuProcessQuery) read what the simulator runs,
// and the shares follow the simulator's per-process ground truth. The GPU in
// these tests has no leakage and a configured idle power, so the truth of a
// process is its dynamic energy exactly (sim/src/processes.h), and the
// tolerances are the energy counter's resolution (1 mJ a read) and the
// utilization samples' 1 % steps.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <map>

#include "support/sim_fixture.hpp"
#include "zeus/attribution/engine.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::attribution {
namespace {

using Clock = Attributor::Clock;

constexpr const char* kConfig = R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB",
    "power": {"idle_w": 50, "max_dynamic_w": 300, "leakage_w_per_c": 0, "clock_exponent": 2.5},
    "thermal": {"throttle_c": 300}, "counters": {"power_noise_w": 0}}]})";

class AttributionSimTest : public zeus::testing::SimulatedGpus {
  protected:
    static Clock::time_point sim_now() {
        double t = 0;
        EXPECT_EQ(zeusSimNow(&t), ZEUS_SIM_OK);
        return Clock::time_point{} + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t));
    }
    static double process_truth(int pid) {
        double j = 0;
        EXPECT_EQ(zeusSimProcessEnergy(0, pid, &j), ZEUS_SIM_OK) << zeusSimLastError();
        return j;
    }
    static int begin(double utilization, int pid, double weight) {
        int id = -1;
        EXPECT_EQ(zeusSimProcessLoadBegin(0, utilization, pid, weight, &id), ZEUS_SIM_OK) << zeusSimLastError();
        return id;
    }
    void check_shared(const char* sharing);
    // Attributes `seconds` of virtual time in 1 s steps; the energy per pid.
    static std::map<std::uint32_t, double> run(Attributor& attributor, const Gpu& gpu, int seconds,
                                               std::map<std::uint32_t, Method>* methods = nullptr) {
        std::map<std::uint32_t, double> joules;
        for (int s = 0; s < seconds; ++s) {
            EXPECT_EQ(zeusSimAdvance(1), ZEUS_SIM_OK);
            const auto interval = attributor.step(0, gpu.total_energy().value(), sim_now());
            EXPECT_EQ(interval.attributed_mj() + interval.remainder.energy_mj(), interval.delta_mj);
            EXPECT_TRUE(interval.errors.empty()) << interval.errors.front().describe();
            for (const Share& share : interval.shares) {
                joules[share.pid] += static_cast<double>(share.energy_mj()) / 1000.0;
                if (methods) (*methods)[share.pid] = share.method;
            }
        }
        return joules;
    }
};

TEST_F(AttributionSimTest, TheNvmlBackendReadsTheSimulatedProcessesAndTheirSamples) {
    configure(kConfig);
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(gpus.size(), 1U);
    ASSERT_NE(process_query(gpus[0]), nullptr);
    auto none = running_compute_processes(gpus[0]);
    ASSERT_TRUE(none.ok()) << none.error().describe();
    EXPECT_TRUE(none->empty());
    begin(0.5, 31, 1.0);
    begin(0.25, 32, 1.0);
    ASSERT_EQ(zeusSimAdvance(2), ZEUS_SIM_OK);
    auto running = running_compute_processes(gpus[0]);
    ASSERT_TRUE(running.ok()) << running.error().describe();
    ASSERT_EQ(running->size(), 2U);
    EXPECT_EQ((*running)[0].pid, 31U);
    auto samples = process_utilization(gpus[0], 0);
    ASSERT_TRUE(samples.ok()) << samples.error().describe();
    ASSERT_FALSE(samples->samples.empty());
    for (const auto& s : samples->samples) EXPECT_EQ(s.sm_util, s.pid == 31 ? 50U : 25U);
    // Nothing newer than the newest: NVML's NOT_FOUND.
    auto again = process_utilization(gpus[0], samples->last_seen_us);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::NotFound);
}

TEST_F(AttributionSimTest, AnExclusiveProcessGetsItsTrueEnergy) {
    configure(kConfig);
    Gpus gpus = Gpus::open(simulated());
    AttributorOptions options;
    options.idle_power = {Milliwatts(50'000)};
    GpusProcessSource source(gpus);
    Attributor attributor(source, options);
    (void)attributor.step(0, gpus[0].total_energy().value(), sim_now());
    begin(0.7, 77, 1.0);
    std::map<std::uint32_t, Method> methods;
    const auto joules = run(attributor, gpus[0], 20, &methods);
    const double truth = process_truth(77);
    EXPECT_NEAR(truth, 300 * 0.7 * 20, 1e-6);
    EXPECT_EQ(methods.at(77), Method::Exclusive);
    // Each of the 21 counter reads may be 1 mJ short of the truth.
    EXPECT_NEAR(joules.at(77), truth, 21 * 1e-3);
}

// Two processes at 60 % and 30 % utilization with the same power per unit of
// utilization: their truths are 2 : 1, and so are their samples.
void AttributionSimTest::check_shared(const char* sharing) {
    configure(kConfig);
    Gpus gpus = Gpus::open(simulated());
    ASSERT_EQ(zeusSimSetSharing(0, sharing), ZEUS_SIM_OK) << zeusSimLastError();
    AttributorOptions options;
    options.idle_power = {Milliwatts(50'000)};
    GpusProcessSource source(gpus);
    Attributor attributor(source, options);
    (void)attributor.step(0, gpus[0].total_energy().value(), sim_now());
    const int a = begin(0.6, 41, 1.0);
    const int b = begin(0.3, 42, 1.0);
    std::map<std::uint32_t, Method> methods;
    auto joules = run(attributor, gpus[0], 30, &methods);
    ASSERT_EQ(zeusSimLoadEnd(a), ZEUS_SIM_OK);
    ASSERT_EQ(zeusSimLoadEnd(b), ZEUS_SIM_OK);
    // One more interval: the samples of the last second arrive with it.
    for (const auto& [pid, j] : run(attributor, gpus[0], 1)) joules[pid] += j;
    EXPECT_EQ(methods.at(41), Method::Utilization);
    const double truth_a = process_truth(41), truth_b = process_truth(42);
    EXPECT_NEAR(truth_a / truth_b, 2.0, 1e-9);
    // The samples are whole percents of 1/6 s periods; the counter 1 mJ a read.
    EXPECT_NEAR(joules.at(41), truth_a, 0.01 * truth_a);
    EXPECT_NEAR(joules.at(42), truth_b, 0.01 * truth_b);
}

TEST_F(AttributionSimTest, ConcurrentProcessesSplitByAccumulatedUtilization) { check_shared("concurrent"); }

TEST_F(AttributionSimTest, TimeSlicedProcessesSplitByAccumulatedUtilization) { check_shared("time_sliced"); }

}  // namespace
}  // namespace zeus::attribution
