// Which clock simulated time follows on the real clock: CLOCK_MONOTONIC, as a
// GPU's counters do. Every clock read of the simulator goes through an
// injected source here, so the test steps the wall clock (as NTP or
// libfaketime would) and the monotonic clock independently and sees which
// one moves the simulated time and energy.
#include <gtest/gtest.h>

#include <cstdint>

#include "sim_clock.h"
#include "simulator.h"
#include "test_support.h"

namespace zeus::sim {
namespace {

using testing::simple_gpu_config;

constexpr double kIdleW = 50;  // simple_gpu_config: idle, no leakage, no noise
constexpr std::int64_t kSecond = 1'000'000'000;

std::int64_t g_monotonic_ns = 5000 * kSecond;  // time since boot
// The wall clock: whole seconds since 1970 (a 2025 date unless a test sets
// another) plus nanoseconds, so that dates past 2262 stay representable.
std::int64_t g_realtime_base_s = 1'750'000'000;
std::int64_t g_realtime_ns = 0;

int fake_clock(clockid_t clock, timespec* ts) {
  std::int64_t base_s = 0;
  std::int64_t ns = 0;
  if (clock == CLOCK_MONOTONIC) {
    ns = g_monotonic_ns;
  } else if (clock == CLOCK_REALTIME) {
    base_s = g_realtime_base_s;
    ns = g_realtime_ns;
  } else {
    return ::clock_gettime(clock, ts);
  }
  // As the kernel's: tv_nsec in [0, 1 s), also before 1970.
  const std::int64_t whole_s = ns >= 0 ? ns / kSecond : -((-ns + kSecond - 1) / kSecond);
  ts->tv_sec = static_cast<time_t>(base_s + whole_s);
  ts->tv_nsec = static_cast<long>(ns - whole_s * kSecond);
  return 0;
}

class SimClock : public ::testing::Test {
 protected:
  void SetUp() override {
    g_realtime_base_s = 1'750'000'000;
    set_clock_source_for_testing(fake_clock);
  }
  // The wall clock now, in µs since 1970.
  static std::int64_t wall_us() { return g_realtime_base_s * 1'000'000 + g_realtime_ns / 1000; }
  void TearDown() override { set_clock_source_for_testing(nullptr); }
  static void elapse(double seconds, double wall_step_s = 0) {
    g_monotonic_ns += static_cast<std::int64_t>(seconds * kSecond);
    g_realtime_ns += static_cast<std::int64_t>((seconds + wall_step_s) * kSecond);
  }
  static double energy(Simulator& sim) {
    return sim.with_gpu(0, [](SharedState& s, double) { return s.gpus[0].dyn.energy_j; });
  }
};

TEST_F(SimClock, WallClockStepsNeitherAddEnergyNorFreezeTheCounters) {
  Simulator sim(parse_config(simple_gpu_config("A100-SXM4-40GB", "{}", "real"), "test"), "");
  const double t0 = sim.now();
  const double e0 = energy(sim);

  elapse(2.0, /*wall_step_s=*/3600);  // the wall clock jumps an hour ahead
  EXPECT_DOUBLE_EQ(sim.now() - t0, 2.0);
  EXPECT_NEAR(energy(sim) - e0, kIdleW * 2.0, 1e-6) << "not an hour of energy in two seconds";

  elapse(1.0, /*wall_step_s=*/-7200);  // and two hours back
  EXPECT_DOUBLE_EQ(sim.now() - t0, 3.0);
  EXPECT_NEAR(energy(sim) - e0, kIdleW * 3.0, 1e-6) << "the counters keep counting";

  // The wall clock only dates readings: now is the wall clock's now.
  EXPECT_EQ(sim.unix_us_at(sim.now()), wall_us());
  EXPECT_EQ(sim.unix_us_at(sim.now() - 0.5), wall_us() - 500'000);
}

// Readings are dated right whatever the wall clock says: before 1970
// (negative timestamps) and after 2262 (where nanoseconds since 1970 no
// longer fit 64 bits).
TEST_F(SimClock, ReadingsAreDatedBefore1970AndAfter2262) {
  for (const std::int64_t base_s : {std::int64_t{-315'619'200}, std::int64_t{10'413'792'000}}) {  // 1960, 2300
    g_realtime_base_s = base_s;
    Simulator sim(parse_config(simple_gpu_config("A100-SXM4-40GB", "{}", "real"), "test"), "");
    elapse(1.25);
    EXPECT_DOUBLE_EQ(sim.now(), 1.25) << base_s;
    EXPECT_EQ(sim.unix_us_at(sim.now()), wall_us()) << base_s;
    EXPECT_EQ(sim.unix_us_at(1.0), wall_us() - 250'000) << base_s;
  }
}

TEST_F(SimClock, TheVirtualClockIgnoresBoth) {
  Simulator sim(parse_config(simple_gpu_config(), "test"), "");
  elapse(5.0, 3600);
  EXPECT_DOUBLE_EQ(sim.now(), 0.0);
  sim.advance_virtual(1.0);
  EXPECT_NEAR(energy(sim), kIdleW * 1.0, 1e-6);
}

}  // namespace
}  // namespace zeus::sim
