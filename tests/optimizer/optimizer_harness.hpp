// A training loop for the power-limit optimizer on simulated GPUs: each
// step runs a fixed fraction of an epoch of a trace-shaped workload on GPU 0
// (the other GPUs carry the same workload as a load), on the simulator's
// virtual clock, so the work slows down exactly as the trace says at each
// power limit and a whole profile takes milliseconds.
#pragma once

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <string>
#include <vector>

#include "support/sim_fixture.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

namespace zeus::testing {

// Every window edge the optimizer asks for, with the step it happened in
// and the simulator's exact energy (all GPUs) at that moment.
class RecordingMonitor final : public EnergyMonitor {
  public:
    struct Event {
        int call;
        std::string what;  // "begin", "end", "cancel"
        std::string name;
        double truth_j;
    };

    RecordingMonitor(EnergyMonitor& inner, unsigned gpu_count, const int& call)
        : inner_(inner), gpu_count_(gpu_count), call_(call) {}

    Status begin_window(std::string_view name, bool sync, bool restart) override {
        events.push_back({call_, "begin", std::string(name), truth_sum()});
        return inner_.begin_window(name, sync, restart);
    }
    Result<Measurement> end_window(std::string_view name, bool sync, bool cancel) override {
        events.push_back({call_, cancel ? "cancel" : "end", std::string(name), truth_sum()});
        return inner_.end_window(name, sync, cancel);
    }
    std::vector<std::string> reset_windows() override { return inner_.reset_windows(); }
    [[nodiscard]] std::vector<std::string> open_windows() const override { return inner_.open_windows(); }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return inner_.gpu_indices(); }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return inner_.cpu_indices(); }

    std::vector<Event> events;

  private:
    double truth_sum() const {
        double total = 0;
        for (unsigned g = 0; g < gpu_count_; ++g) {
            double j = 0;
            EXPECT_EQ(zeusSimGroundTruthEnergy(g, &j), ZEUS_SIM_OK) << zeusSimLastError();
            total += j;
        }
        return total;
    }
    EnergyMonitor& inner_;
    unsigned gpu_count_;
    const int& call_;
};

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
