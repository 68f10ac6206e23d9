// The power-limit optimizer on simulated A40s (optimizer_*_test.cpp): a
// fresh simulator per test, a training loop that follows a closed-form power
// trace, and the monitor that records every window the optimizer opens.
// Expected schedules come from the closed form in reference/optimizers.md
// §1.2 (candidate k is set on call w+1+k(u+p), its window covers calls
// [w+1+k(u+p)+u, w+1+(k+1)(u+p)), Done on call w+1+N(u+p)), not from the code.
#pragma once

#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/optimizer_harness.hpp"

namespace zeus::optimizer {

using testing::RecordingMonitor;
using testing::TraceTraining;

inline constexpr const char* kTwoA40s = R"({"clock": "virtual", "gpus": [{"model": "A40", "count": 2}]})";
inline constexpr const char* kOneA40 = R"({"clock": "virtual", "gpus": [{"model": "A40"}]})";

// The closed-form GPU of reference/optimizers.md §6.1 b as a trace: one
// epoch is 40 steps of 0.1·(190/(p − 60))^0.6 s (0.1 s from 250 W up), drawing
// min(p, 250) W.
inline double step_time(double p) { return p >= 250 ? 0.1 : 0.1 * std::pow(190.0 / (p - 60.0), 0.6); }

inline int define_model_trace() {
    std::vector<double> limits, epoch_s, power_w;
    for (int p = 100; p <= 300; p += 25) {
        limits.push_back(p);
        epoch_s.push_back(40 * step_time(p));
        power_w.push_back(std::min(p, 250));
    }
    int id = -1;
    EXPECT_EQ(zeusSimTraceProfileDefine("model", static_cast<unsigned>(limits.size()), limits.data(), epoch_s.data(),
                                        power_w.data(), &id),
              ZEUS_SIM_OK)
        << zeusSimLastError();
    return id;
}

class OptimizerSchedule : public testing::SimulatedGpus {
  protected:
    // A fresh simulator (its own state file) with `config`.
    void open(const char* config) {
        monitor_.reset();
        inner_.reset();
        training_.reset();
        gpus_ = Gpus();
        setenv("ZEUS_SIM_STATE", (dir_ / ("state-" + std::to_string(++opened_))).c_str(), 1);
        configure(config);
        gpus_ = Gpus::open(simulated());
        ASSERT_TRUE(gpus_.status().ok()) << gpus_.status().error().describe();
        inner_ = EnergyMonitor::open(gpus_, nullptr, nullptr).value();
        monitor_ = std::make_unique<RecordingMonitor>(*inner_, static_cast<unsigned>(gpus_.size()), training().call);
    }
    TraceTraining& training() {
        if (!training_) training_ = std::make_unique<TraceTraining>(gpus_, define_model_trace(), 1.0 / 40);
        return *training_;
    }
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
    std::vector<RecordingMonitor::Event> events(const std::string& what) const {
        std::vector<RecordingMonitor::Event> out;
        for (const auto& e : monitor_->events) {
            if (e.what == what) out.push_back(e);
        }
        return out;
    }

    Gpus gpus_;
    std::unique_ptr<EnergyMonitor> inner_;
    std::unique_ptr<RecordingMonitor> monitor_;
    std::unique_ptr<TraceTraining> training_;
    int opened_ = 0;
};

inline std::vector<Milliwatts> every_25w_from(int max_w, int min_w) {
    std::vector<Milliwatts> out;
    for (int p = max_w; p >= min_w; p -= 25) out.emplace_back(p * 1000);
    return out;
}

}  // namespace zeus::optimizer
