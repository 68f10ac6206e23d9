// Physics and sensor behaviour, driven through the Simulator on private state
// and the virtual clock. Expected values come from the model's equations
// (docs/simulator.md), evaluated here with the configured parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "simulator.h"
#include "test_support.h"

namespace zeus::sim {
namespace {

using testing::simple_gpu_config;

constexpr double kIdleW = 50, kDynamicW = 300, kAlpha = 2.5, kMaxMhz = 1410;

class SimFixture {
 public:
  explicit SimFixture(const std::string& json) : sim(parse_config(json, "test"), "") {}

  GpuDynamics dyn(unsigned gpu = 0) {
    return sim.with_gpu(gpu, [&](SharedState& s, double) { return s.gpus[gpu].dyn; });
  }
  GpuParams params(unsigned gpu = 0) {
    return sim.with_gpu(gpu, [&](SharedState& s, double) { return s.gpus[gpu].params; });
  }
  template <typename F>
  void mutate(F&& f, unsigned gpu = 0) {
    sim.with_gpu(gpu, [&](SharedState& s, double) {
      f(s.gpus[gpu].dyn);
      return 0;
    });
  }

  Simulator sim;
};

TEST(SimPhysics, EnergyCounterTracksGroundTruthWithinOneRefreshPeriod) {
  SimFixture f(simple_gpu_config());
  const auto initial = static_cast<double>(f.params().initial_energy_mj);
  const double max_power_w = kIdleW + kDynamicW;  // limit 400 W does not bind
  const double period_s = f.params().energy_period_s;
  int load = -1;
  for (int step = 0; step < 300; ++step) {
    if (step % 7 == 0) {
      if (load >= 0) {
        f.sim.end_load(load);
        load = -1;
      } else {
        load = f.sim.begin_load(0, 0.3 + 0.1 * (step % 5), -1);
      }
    }
    f.sim.advance_virtual(0.013 * (step % 11) + 0.001);
    const GpuDynamics d = f.dyn();
    const double shown_j = (static_cast<double>(d.energy_counter_mj) - initial) / 1000.0;
    EXPECT_LE(shown_j, d.energy_j + 1e-9) << "the counter never runs ahead of the truth";
    EXPECT_GE(shown_j, d.energy_j - max_power_w * period_s - 0.001) << "at step " << step;
  }
}

TEST(SimPhysics, PartTimeWindowMissesLoadOutsideIt) {
  // A100: a reading every 100 ms averages only the last 25 ms before it.
  SimFixture f(simple_gpu_config());
  for (int k = 0; k < 30; ++k) {
    const int load = f.sim.begin_load(0, 1.0, -1);
    f.sim.advance_virtual(0.075);  // busy from the tick to the start of the next window
    f.sim.end_load(load);
    f.sim.advance_virtual(0.025);  // idle exactly during the window
  }
  const GpuDynamics d = f.dyn();
  EXPECT_NEAR(d.instant_power_w, kIdleW, 1e-6) << "the instant reading never sees the load";
  const double true_mean_w = 0.75 * (kIdleW + kDynamicW) + 0.25 * kIdleW;
  EXPECT_NEAR(d.average_power_w, true_mean_w, 1e-6) << "the 1 s average integrates everything";
  EXPECT_NEAR(d.energy_j, true_mean_w * 3.0, 1e-6);
}

TEST(SimPhysics, AverageReadingIsMeanOfLastSecondAndInstantIsWindowMean) {
  SimFixture f(simple_gpu_config("H100-SXM5-80GB"));
  f.sim.advance_virtual(10.0);
  const int load = f.sim.begin_load(0, 1.0, -1);
  f.sim.advance_virtual(0.5);
  f.sim.end_load(load);
  const GpuDynamics d = f.dyn();
  EXPECT_NEAR(d.power_refreshed_s, 10.5, 1e-9);
  EXPECT_NEAR(d.average_power_w, 0.5 * kIdleW + 0.5 * (kIdleW + kDynamicW), 1e-6);
  EXPECT_NEAR(d.instant_power_w, kIdleW + kDynamicW, 1e-6);
}

TEST(SimPhysics, PowerLimitThrottlesClockAndSlowsWork) {
  SimFixture f(simple_gpu_config());
  const double limit_w = 200;
  f.mutate([&](GpuDynamics& d) { d.power_limit_w = limit_w; });
  // Highest clock with idle + dynamic * (f/fmax)^alpha <= limit.
  const double speed = std::pow((limit_w - kIdleW) / kDynamicW, 1.0 / kAlpha);

  const int load = f.sim.begin_load(0, 1.0, -1);
  f.sim.advance_virtual(0.01);
  EXPECT_NEAR(f.dyn().clock_mhz, kMaxMhz * speed, 1e-6);
  EXPECT_NEAR(f.dyn().power_w, limit_w, 1e-6);
  f.sim.end_load(load);

  const double energy_before = f.dyn().energy_j;
  const double elapsed = f.sim.run_work(0, 3.0, 1.0, -1);
  EXPECT_NEAR(elapsed, 3.0 / speed, 1e-6);
  EXPECT_NEAR(f.dyn().energy_j - energy_before, limit_w * elapsed, 1e-6);

  f.mutate([&](GpuDynamics& d) { d.power_limit_w = 400; });
  EXPECT_NEAR(f.sim.run_work(0, 3.0, 1.0, -1), 3.0, 1e-6) << "unthrottled: 1 unit per second";
}

TEST(SimPhysics, LockedClocksClampTheClock) {
  SimFixture f(simple_gpu_config());
  f.mutate([](GpuDynamics& d) { d.locked_max_mhz = 705; });
  EXPECT_NEAR(f.sim.run_work(0, 2.0, 1.0, -1), 2.0 * kMaxMhz / 705, 1e-6);
  const int load = f.sim.begin_load(0, 0.5, -1);
  f.sim.advance_virtual(0.1);
  EXPECT_NEAR(f.dyn().clock_mhz, 705, 1e-9);
  EXPECT_NEAR(f.dyn().power_w, kIdleW + kDynamicW * 0.5 * std::pow(705 / kMaxMhz, kAlpha), 1e-6);
  f.sim.end_load(load);
  f.mutate([](GpuDynamics& d) {
    d.locked_min_mhz = 1005;
    d.locked_max_mhz = 1200;
  });
  f.sim.advance_virtual(0.1);
  EXPECT_NEAR(f.dyn().clock_mhz, 1005, 1e-9) << "an idle GPU with locked clocks sits at the locked minimum";
}

TEST(SimPhysics, TemperatureRelaxesWithTheConfiguredTimeConstant) {
  const double tau = 2.0, r = 0.1, ambient = 30;
  SimFixture f(simple_gpu_config(
      "A100-SXM4-40GB", R"({"thermal": {"time_constant_s": 2, "resistance_c_per_w": 0.1, "ambient_c": 30, "initial_c": 30}})"));
  f.sim.begin_load(0, 1.0, -1);
  const double t_eq = ambient + r * (kIdleW + kDynamicW);
  f.sim.advance_virtual(tau);
  EXPECT_NEAR(f.dyn().temperature_c, t_eq + (ambient - t_eq) * std::exp(-1.0), 1e-9);
  f.sim.advance_virtual(9 * tau);
  EXPECT_NEAR(f.dyn().temperature_c, t_eq + (ambient - t_eq) * std::exp(-10.0), 1e-9);
}

TEST(SimPhysics, LeakageMakesHotWorkCostMoreEnergy) {
  const double leak = 2.0;
  // A huge time constant keeps the temperature where we put it.
  SimFixture f(simple_gpu_config("A100-SXM4-40GB", R"({
      "power": {"leakage_w_per_c": 2, "limit_max_w": 1000, "limit_default_w": 1000},
      "thermal": {"time_constant_s": 1e6, "ambient_c": 30, "initial_c": 30}})"));
  double e0 = f.dyn().energy_j;
  EXPECT_NEAR(f.sim.run_work(0, 10, 1.0, -1), 10, 1e-6);
  const double cold_j = f.dyn().energy_j - e0;
  f.sim.inject(0, "set_temperature", 80);
  e0 = f.dyn().energy_j;
  EXPECT_NEAR(f.sim.run_work(0, 10, 1.0, -1), 10, 1e-6);
  const double hot_j = f.dyn().energy_j - e0;
  EXPECT_NEAR(cold_j, (kIdleW + kDynamicW) * 10, 1.0);
  EXPECT_NEAR(hot_j, (kIdleW + kDynamicW + leak * 50) * 10, 1.0);
  EXPECT_GT(hot_j / cold_j, 1.25);
}

TEST(SimPhysics, HeatThrottlesTheClock) {
  SimFixture f(simple_gpu_config("A100-SXM4-40GB", R"({
      "thermal": {"throttle_c": 40, "throttle_mhz_per_c": 100, "resistance_c_per_w": 0.2, "time_constant_s": 1, "initial_c": 30}})"));
  const double elapsed = f.sim.run_work(0, 20, 1.0, -1);
  EXPECT_GT(elapsed, 21.0) << "a hot GPU is slower than 1 unit per second";
  const int load = f.sim.begin_load(0, 1.0, -1);
  f.sim.advance_virtual(1);
  const GpuDynamics d = f.dyn();
  EXPECT_GT(d.temperature_c, 40);
  EXPECT_NEAR(d.clock_mhz, std::max(210.0, kMaxMhz - (d.temperature_c - 40) * 100), 5.0);
  f.sim.end_load(load);
}

TEST(SimPhysics, LongGapsSkipAheadWithoutChangingTheResult) {
  const std::string config = simple_gpu_config(
      "A100-SXM4-40GB", R"({"power": {"leakage_w_per_c": 0.4}, "thermal": {"time_constant_s": 5}})");
  SimFixture once(config), stepped(config);
  once.sim.begin_load(0, 0.7, -1);
  stepped.sim.begin_load(0, 0.7, -1);
  once.sim.advance_virtual(300);
  for (int i = 0; i < 3000; ++i) stepped.sim.advance_virtual(0.1);
  const GpuDynamics a = once.dyn(), b = stepped.dyn();
  EXPECT_NEAR(a.energy_j, b.energy_j, 0.5);
  EXPECT_NEAR(a.temperature_c, b.temperature_c, 1e-3);
  EXPECT_NEAR(static_cast<double>(a.energy_counter_mj), static_cast<double>(b.energy_counter_mj), 600);
  EXPECT_NEAR(a.average_power_w, b.average_power_w, 0.01);
  EXPECT_EQ(a.next_power_tick, b.next_power_tick);
}

TEST(SimPhysics, TraceProfileSetsPowerAndSpeedFromThePowerLimit) {
  SimFixture f(simple_gpu_config("A40"));
  const double limits[] = {300, 100, 200}, epoch_s[] = {8, 20, 10}, power_w[] = {220, 100, 180};
  const int profile = f.sim.define_trace_profile("synthetic", 3, limits, epoch_s, power_w);
  f.mutate([](GpuDynamics& d) { d.power_limit_w = 250; });
  const double e0 = f.dyn().energy_j;
  const double elapsed = f.sim.run_work(0, 2.0, 1.0, profile);
  EXPECT_NEAR(elapsed, 2.0 * 9.0, 1e-6) << "time per epoch interpolated at 250 W";
  EXPECT_NEAR(f.dyn().energy_j - e0, 200.0 * elapsed, 1e-6) << "power interpolated at 250 W";
  EXPECT_EQ(f.sim.define_trace_profile("synthetic", 3, limits, epoch_s, power_w), profile);
}

TEST(SimPhysics, UtilizationLoadsShareTheGpu) {
  SimFixture f(simple_gpu_config());
  f.sim.begin_load(0, 0.8, -1);
  f.sim.begin_load(0, 0.8, -1);
  f.sim.advance_virtual(0.1);
  EXPECT_NEAR(f.dyn().utilization, 1.0, 1e-12);
  EXPECT_NEAR(f.dyn().power_w, kIdleW + kDynamicW, 1e-6);
}

}  // namespace
}  // namespace zeus::sim
