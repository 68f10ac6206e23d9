// A training loop for the power-limit optimizer on simulated GPUs: each
// step runs a fixed fraction of an epoch of a trace-shaped workload on GPU 0
// (the other GPUs carry the same workload as a load), on the simulator's
// virtual clock, so the work slows down exactly as the trace says at each
// power limit and a whole profile takes milliseconds. The acceptance tests
// run it against the power traces' physics (optimizer_acceptance_test.cpp);
// the schedule's tests run over fakes (optimizer_schedule_fixture.hpp).
#pragma once

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <vector>

#include "support/sim_fixture.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

namespace zeus::testing {

// Drives the hooks as a training loop would.
class TraceTraining {
  public:
    TraceTraining(const Gpus& gpus, int profile, double epochs_per_step)
        : gpus_(gpus), profile_(profile), epochs_per_step_(epochs_per_step) {
        for (unsigned g = 1; g < gpus.size(); ++g) {
            int load = -1;
            EXPECT_EQ(zeusSimTraceLoadBegin(g, profile, &load), ZEUS_SIM_OK) << zeusSimLastError();
        }
    }

    // One training step: on_step_begin, the work, on_step_end.
    void step(optimizer::GlobalPowerLimitOptimizer& optimizer) {
        ++call;
        const Status s = optimizer.on_step_begin();
        ASSERT_TRUE(s.ok()) << "step " << call << ": " << s.error().describe();
        std::vector<Milliwatts> limits;
        for (const auto& gpu : gpus_) limits.push_back(gpu->power_limit().value());
        for (const auto& limit : limits) EXPECT_EQ(limit, limits.front()) << "step " << call << ": GPUs disagree";
        limit_during.push_back(limits.front());
        double elapsed = 0;
        ASSERT_EQ(zeusSimRunTraceWork(0, profile_, epochs_per_step_, &elapsed), ZEUS_SIM_OK) << zeusSimLastError();
        step_seconds.push_back(elapsed);
        ASSERT_TRUE(optimizer.on_step_end().ok());
    }
    // Steps until the optimizer is done (at most `limit` steps).
    void run_to_done(optimizer::GlobalPowerLimitOptimizer& optimizer, int limit = 100000) {
        while (!optimizer.done() && call < limit) {
            step(optimizer);
            if (::testing::Test::HasFatalFailure()) return;
        }
    }

    int call = 0;                        // on_step_begin calls so far
    std::vector<Milliwatts> limit_during;  // [call − 1]: the limit while that step ran
    std::vector<double> step_seconds;      // [call − 1]: how long that step took

  private:
    const Gpus& gpus_;
    int profile_;
    double epochs_per_step_;
};

}  // namespace zeus::testing
