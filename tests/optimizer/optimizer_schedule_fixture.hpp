// The power-limit optimizer over fakes (optimizer_{schedule,selection,carbon}_test.cpp):
// fake GPUs with an A40's limits (100–300 W) on one manual clock, a training
// loop whose every step takes and draws what the closed-form GPU below says
// at the limit in force, and the fake energy monitor
// (tests/support/fake_energy_monitor.hpp), which measures that script and
// records every window edge the optimizer asks for. Expected schedules come
// from the closed form in reference/optimizers.md §1.2 (candidate k is set
// on call w+1+k(u+p), its window covers calls [w+1+k(u+p)+u, w+1+(k+1)(u+p)),
// Done on call w+1+N(u+p)), and a window's time and energy from the steps
// it covers, not from the code.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/fake_energy_monitor.hpp"
#include "support/fake_gpu.hpp"
#include "support/test_directory.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

namespace zeus::optimizer {

using testing::FakeEnergyMonitor;
using testing::FakeGpu;
using testing::ManualClock;

// The closed-form GPU of reference/optimizers.md §6.1 b: at limit p (W) a
// step (1/40 of an epoch) takes 0.1·(190/(p − 60))^0.6 s (0.1 s from 250 W
// up) and each GPU draws min(p, 250) W.
inline double step_time(double p) { return p >= 250 ? 0.1 : 0.1 * std::pow(190.0 / (p - 60.0), 0.6); }
inline double step_power(double p) { return std::min(p, 250.0); }
inline double watts(Milliwatts limit) { return static_cast<double>(limit.count()) / 1000.0; }

// Drives the hooks as a training loop would.
class ModelTraining {
  public:
    ModelTraining(const Gpus& gpus, ManualClock& clock, FakeEnergyMonitor& monitor)
        : gpus_(gpus), clock_(clock), monitor_(monitor) {}

    // One training step: on_step_begin, the work at the limit it left, on_step_end.
    void step(GlobalPowerLimitOptimizer& optimizer) {
        ++call;
        monitor_.mark_step(call);
        const Status s = optimizer.on_step_begin();
        ASSERT_TRUE(s.ok()) << "step " << call << ": " << s.error().describe();
        std::vector<Milliwatts> limits;
        for (const auto& gpu : gpus_) limits.push_back(gpu->power_limit().value());
        for (const auto& limit : limits) EXPECT_EQ(limit, limits.front()) << "step " << call << ": GPUs disagree";
        limit_during.push_back(limits.front());
        step_seconds.push_back(work(limits.front()));
        ASSERT_TRUE(optimizer.on_step_end().ok());
    }
    // One step's work at `limit`, without the hooks: every GPU draws
    // step_power while the clock moves step_time; returns that time.
    double work(Milliwatts limit) {
        const double seconds = step_time(watts(limit));
        const Milliwatts draw(static_cast<std::int64_t>(std::llround(step_power(watts(limit)) * 1000)));
        for (std::size_t i = 0; i < gpus_.size(); ++i) testing::fake(gpus_, i).draw(draw);
        clock_.advance(std::chrono::duration<double>(seconds));
        return seconds;
    }
    // Steps until the optimizer is done (at most `limit` steps).
    void run_to_done(GlobalPowerLimitOptimizer& optimizer, int limit = 100000) {
        while (!optimizer.done() && call < limit) {
            step(optimizer);
            if (::testing::Test::HasFatalFailure()) return;
        }
    }

    int call = 0;                          // on_step_begin calls so far
    std::vector<Milliwatts> limit_during;  // [call − 1]: the limit while that step ran
    std::vector<double> step_seconds;      // [call − 1]: how long that step took

  private:
    const Gpus& gpus_;
    ManualClock& clock_;
    FakeEnergyMonitor& monitor_;
};

class OptimizerSchedule : public ::testing::Test {
  protected:
    // `count` fresh fake GPUs with an A40's limits (100–300 W, 300 W set),
    // the monitor over them and the training loop.
    void open(unsigned count) {
        training_.reset();
        monitor_.reset();
        gpus_ = Gpus();
        clock_ = std::make_shared<ManualClock>();
        gpus_ = testing::fake_gpus_on(clock_, count, [](FakeGpu& gpu) {
            gpu.set_constraints(Milliwatts(100'000), Milliwatts(300'000), Milliwatts(300'000));
        });
        monitor_ = std::make_unique<FakeEnergyMonitor>(gpus_, clock_);
        training_ = std::make_unique<ModelTraining>(gpus_, *clock_, *monitor_);
    }
    ModelTraining& training() { return *training_; }
    std::unique_ptr<GlobalPowerLimitOptimizer> create(PowerLimitOptimizerOptions options = {}) {
        auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, std::move(options));
        EXPECT_TRUE(optimizer.ok()) << optimizer.error().describe();
        return optimizer.ok() ? std::move(optimizer).value() : nullptr;
    }
    // An optimizer with `selector` that asks it at every hook whether its
    // choice went stale, run until profiling is done; null on failure.
    std::unique_ptr<GlobalPowerLimitOptimizer> profiled_with(SelectorPtr selector) {
        PowerLimitOptimizerOptions options;
        options.selector = std::move(selector);
        options.reselect_period = Seconds(0);
        auto optimizer = create(options);
        if (!optimizer) return nullptr;
        training().run_to_done(*optimizer);
        if (HasFatalFailure()) return nullptr;
        return optimizer;
    }
    std::vector<FakeEnergyMonitor::Edge> events(const std::string& what) const { return monitor_->edges(what); }

    testing::TestDirectory directory_;
    const std::filesystem::path& dir_ = directory_.path();
    std::shared_ptr<ManualClock> clock_;
    Gpus gpus_;
    std::unique_ptr<FakeEnergyMonitor> monitor_;
    std::unique_ptr<ModelTraining> training_;
};

inline std::vector<Milliwatts> every_25w_from(int max_w, int min_w) {
    std::vector<Milliwatts> out;
    for (int p = max_w; p >= min_w; p -= 25) out.emplace_back(p * 1000);
    return out;
}

}  // namespace zeus::optimizer
