// Guards that keep a damaged state or an extreme time from hanging the
// simulator under its lock. Former hangs run in a child with a deadline.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "simulator.h"
#include "test_support.h"

namespace zeus::sim {
namespace {

using testing::exit_code_in_child;
using testing::simple_gpu_config;

TEST(SimStateGuard, DamagedSensorPeriodIsReportedInsteadOfLoopingForever) {
  Simulator sim(parse_config(simple_gpu_config(), "test"), "");
  sim.with_gpu(0, [](SharedState& s, double) { return s.gpus[0].params.power_period_s = 0; });
  const int code = exit_code_in_child(20, [&] {
    try {
      sim.advance_virtual(1.0);
    } catch (const SimError& e) {
      return std::string(e.what()).find("damaged") != std::string::npos ? 0 : 2;
    }
    return 3;
  });
  EXPECT_EQ(code, 0) << "-1: hung";
}

TEST(SimStateGuard, ADamagedFileIsReinitialisedByTheNextProcessAlone) {
  testing::TempDir dir;
  const SimConfig config = parse_config(simple_gpu_config(), "test");
  {
    StateMapping first(config, dir.file("state"));
    first.state().gpus[0].params.energy_period_s = 0;
  }
  StateMapping second(config, dir.file("state"));
  EXPECT_DOUBLE_EQ(second.state().gpus[0].params.energy_period_s, config.gpus[0].energy_period_s);
}

TEST(SimStateGuard, SteppingStopsWhenTimeCannotAdvanceInDoublePrecision) {
  auto state = std::make_unique<SharedState>();
  initialize_state(*state, parse_config(simple_gpu_config(), "test"), 0);
  // Here t + 10 ms == t: the next event can never be later than t.
  state->gpus[0].dyn.last_update_s = 1e15;
  const int code = exit_code_in_child(20, [&] {
    advance_gpu(*state, 0, 1e15 + 2);
    return state->gpus[0].dyn.last_update_s == 1e15 ? 0 : 2;
  });
  EXPECT_EQ(code, 0) << "-1: hung";
}

}  // namespace
}  // namespace zeus::sim
