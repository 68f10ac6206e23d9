// The optimizer's state machine over fake GPUs: which limit is in force at
// every step, when windows open and close, interruptions at epoch ends,
// warmup_steps = 0, restoring the earlier limit and a GPU lost in a window
// (optimizer_schedule_fixture.hpp has where the expected schedules come from).
#include "optimizer/optimizer_schedule_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace zeus::optimizer {
namespace {

TEST_F(OptimizerSchedule, StepsFollowTheDocumentedSchedule) {
    open(2);
    auto optimizer = create();
    ASSERT_TRUE(optimizer);
    const auto candidates = every_25w_from(300, 100);
    ASSERT_EQ(optimizer->candidates(), candidates);
    EXPECT_EQ(optimizer->world_size(), 2);
    const int w = 1, u = 10, p = 40, n = static_cast<int>(candidates.size());
    const int done_call = w + 1 + n * (u + p);
    ASSERT_EQ(done_call, 452);  // the defaults on a 100–300 W GPU, as the reference says
    ModelTraining& t = training();
    t.run_to_done(*optimizer);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(t.call, done_call);
    for (int k = 0; k < 5; ++k) t.step(*optimizer);  // the chosen limit stays

    for (int call = 1; call <= t.call; ++call) {
        Milliwatts expected = candidates.front();
        if (call >= done_call) {
            expected = *optimizer->optimal_power_limit();
        } else if (call > w) {
            expected = candidates[static_cast<std::size_t>((call - w - 1) / (u + p))];
        }
        ASSERT_EQ(t.limit_during[call - 1], expected) << "call " << call;
    }
    const auto begins = events("begin");
    const auto ends = events("end");
    ASSERT_EQ(begins.size(), candidates.size());
    ASSERT_EQ(ends.size(), candidates.size());
    EXPECT_TRUE(events("cancel").empty());
    ASSERT_EQ(optimizer->measurements().size(), candidates.size());
    for (int k = 0; k < n; ++k) {
        const auto& m = optimizer->measurements()[k];
        EXPECT_EQ(m.power_limit, candidates[k]);
        EXPECT_EQ(begins[k].step, w + 1 + k * (u + p) + u) << k;
        EXPECT_EQ(ends[k].step, w + 1 + (k + 1) * (u + p)) << k;
        EXPECT_EQ(begins[k].name, power_limit_window_name(candidates[k]));
        // The window holds exactly the p steps at its limit: by the script,
        // p step times, and both GPUs drawing the step power meanwhile (to
        // the counters' 1 mJ at both edges of both GPUs).
        const double seconds = p * step_time(watts(candidates[k]));
        EXPECT_NEAR(m.time.count(), seconds, 1e-6 * seconds) << k;
        const double truth = 2 * step_power(watts(candidates[k])) * seconds;
        EXPECT_NEAR(m.energy.count(), truth, 0.004) << k;
    }
    // ZeusCost(0.5) over both GPUs, computed here from the measurements.
    const auto& ms = optimizer->measurements();
    double best = INFINITY;
    Milliwatts chosen{0};
    for (const auto& m : ms) {
        const double cost = 0.5 * m.energy.count() + 0.5 * 300.0 * 2 * m.time.count();
        if (cost < best) {
            best = cost;
            chosen = m.power_limit;
        }
    }
    EXPECT_EQ(optimizer->optimal_power_limit(), chosen);
    EXPECT_EQ(optimizer->selector()->name(), "zeus-cost:eta=0.5");
}

TEST_F(OptimizerSchedule, WithoutWarmupTheWindowOpensWithTheLimit) {
    open(1);
    PowerLimitOptimizerOptions options;
    options.warmup_steps = 0;
    options.wait_steps = 3;
    options.profile_steps = 5;
    options.pl_step = Watts(50);
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    const auto candidates = std::vector<Milliwatts>{Milliwatts(300000), Milliwatts(250000), Milliwatts(200000),
                                                    Milliwatts(150000), Milliwatts(100000)};
    ASSERT_EQ(optimizer->candidates(), candidates);
    training().run_to_done(*optimizer);
    const int w = 3, p = 5;
    EXPECT_EQ(training().call, w + 1 + 5 * p);
    const auto begins = events("begin");
    ASSERT_EQ(begins.size(), 5U);
    for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(begins[k].step, w + 1 + k * p) << k;
        EXPECT_EQ(training().limit_during[begins[k].step - 1], candidates[k]) << k;
    }
}

// Epoch ends interrupt warm-ups and windows; every measured window must still
// cover exactly profile_steps steps at its own limit inside one epoch.
void check_interrupted_run(int steps_per_epoch, GlobalPowerLimitOptimizer& optimizer, ModelTraining& t,
                           const FakeEnergyMonitor& monitor, const std::vector<Milliwatts>& candidates) {
    const int p = 40;
    std::vector<int> epoch_end_after;  // calls after which on_epoch_end ran
    for (int epoch = 0; epoch < 40 && !optimizer.done(); ++epoch) {
        ASSERT_TRUE(optimizer.on_epoch_begin().ok());
        for (int s = 0; s < steps_per_epoch && !optimizer.done(); ++s) {
            t.step(optimizer);
            ASSERT_FALSE(::testing::Test::HasFatalFailure());
        }
        if (optimizer.done()) break;
        ASSERT_TRUE(optimizer.on_epoch_end().ok());
        epoch_end_after.push_back(t.call);
    }
    ASSERT_TRUE(optimizer.done()) << steps_per_epoch;
    std::vector<Milliwatts> measured;
    for (const auto& m : optimizer.measurements()) measured.push_back(m.power_limit);
    EXPECT_EQ(measured, candidates) << steps_per_epoch;  // each once, in order

    const auto edges = monitor.edges();
    const FakeEnergyMonitor::Edge* open = nullptr;
    int cancels = 0;
    for (const auto& e : edges) {
        if (e.what == "begin") {
            open = &e;
            continue;
        }
        ASSERT_NE(open, nullptr);
        ASSERT_EQ(e.name, open->name);
        if (e.what == "cancel") {
            ++cancels;
            // Cancelled exactly at an epoch end, inside the window.
            EXPECT_NE(std::find(epoch_end_after.begin(), epoch_end_after.end(), e.step), epoch_end_after.end());
        } else {
            EXPECT_EQ(e.step - open->step, p) << open->name;
            for (int call = open->step; call < e.step; ++call) {
                EXPECT_EQ(power_limit_window_name(t.limit_during[call - 1]), open->name) << call;
            }
            for (int end : epoch_end_after) EXPECT_FALSE(end >= open->step && end < e.step) << open->name;
        }
        open = nullptr;
    }
    // An interrupted limit is set again by the first step of the next epoch
    // (Ready with one step), so that step already runs at it; between the
    // epoch end and that step the GPU is at the maximum.
    for (int end : epoch_end_after) {
        if (end >= t.call) continue;
        const Milliwatts before = t.limit_during[end - 1];
        if (before == candidates.front()) continue;  // nothing was being profiled
        EXPECT_EQ(t.limit_during[end], before) << "the interrupted limit is retried at step " << end + 1;
    }
    if (steps_per_epoch % 50 == 5) {
        EXPECT_EQ(cancels, 0);  // interrupted in warm-ups only
    }
    if (steps_per_epoch % 50 == 15) {
        EXPECT_GT(cancels, 0);
    }
}

TEST_F(OptimizerSchedule, InterruptedLimitsAreRetriedFromTheirWarmup) {
    for (int steps_per_epoch : {55, 65, 100}) {
        open(1);
        auto optimizer = create();
        ASSERT_TRUE(optimizer);
        check_interrupted_run(steps_per_epoch, *optimizer, training(), *monitor_, every_25w_from(300, 100));
        ASSERT_FALSE(HasFatalFailure()) << steps_per_epoch;
        optimizer.reset();
    }
}

TEST_F(OptimizerSchedule, AnEpochEndPutsTheMaximumBackUntilTheNextStep) {
    open(1);
    auto optimizer = create();
    ASSERT_TRUE(optimizer);
    for (int s = 0; s < 60; ++s) training().step(*optimizer);  // inside 275 W's warm-up
    ASSERT_EQ(gpus_[0].power_limit().value(), Milliwatts(275000));
    ASSERT_TRUE(optimizer->on_epoch_end().ok());
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(300000));
    ASSERT_TRUE(std::holds_alternative<state::Ready>(optimizer->state()));
    training().step(*optimizer);
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(275000));
    ASSERT_TRUE(std::holds_alternative<state::Warmup>(optimizer->state()));
    EXPECT_EQ(std::get<state::Warmup>(optimizer->state()).steps, 10U);
}

TEST_F(OptimizerSchedule, EpochsTooShortForOneLimitEndProfilingWithAReason) {
    open(1);
    auto optimizer = create();  // a limit needs 1 + 10 + 40 steps inside one epoch
    ASSERT_TRUE(optimizer);
    Status last;
    int epochs = 0;
    for (; epochs < 10 && !optimizer->done(); ++epochs) {
        for (int s = 0; s < 50; ++s) training().step(*optimizer);
        last = optimizer->on_epoch_end();
    }
    // Both epochs of 50 steps end inside the maximum limit's window, and
    // both are shorter than the 51 steps a retry needs: stop after the second.
    EXPECT_EQ(epochs, 2);
    ASSERT_FALSE(last.ok());
    EXPECT_EQ(last.error().code, ErrorCode::InvalidState);
    EXPECT_NE(last.error().message.find("epochs of 50 steps"), std::string::npos) << last.error().message;
    EXPECT_NE(last.error().hint.find("at most 49"), std::string::npos) << last.error().hint;
    EXPECT_EQ(optimizer->optimal_power_limit(), Milliwatts(300000));
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(300000));
    // Epochs that fit are fine, however many limits get interrupted.
    optimizer.reset();  // it restores its limits through the GPUs open() is about to close
    open(1);
    auto fits = create();
    ASSERT_TRUE(fits);
    for (int epoch = 0; epoch < 40 && !fits->done(); ++epoch) {
        for (int s = 0; s < 51 && !fits->done(); ++s) training().step(*fits);
        if (!fits->done()) {
            ASSERT_TRUE(fits->on_epoch_end().ok()) << epoch;
        }
    }
    EXPECT_TRUE(fits->done());
    EXPECT_EQ(fits->measurements().size(), 9U);
}

TEST_F(OptimizerSchedule, TheEarlierLimitComesBackWhenClosedOrDestroyed) {
    open(2);
    for (const auto& gpu : gpus_) ASSERT_TRUE(gpu->set_power_limit(Milliwatts(220000)).ok());
    auto optimizer = create();
    ASSERT_TRUE(optimizer);
    EXPECT_EQ(gpus_[1].power_limit().value(), Milliwatts(300000));
    for (int s = 0; s < 30; ++s) training().step(*optimizer);  // inside 300 W's window
    ASSERT_TRUE(std::holds_alternative<state::Profiling>(optimizer->state()));
    ASSERT_TRUE(optimizer->close().ok());
    for (const auto& gpu : gpus_) EXPECT_EQ(gpu->power_limit().value(), Milliwatts(220000));
    EXPECT_TRUE(monitor_->open_windows().empty());  // the open window was cancelled
    ASSERT_TRUE(optimizer->on_step_begin().ok());  // closed: the hooks do nothing
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(220000));

    // Done, then destroyed: the same.
    auto finished = create();
    ASSERT_TRUE(finished);
    training().run_to_done(*finished);
    ASSERT_TRUE(finished->done());
    finished.reset();
    for (const auto& gpu : gpus_) EXPECT_EQ(gpu->power_limit().value(), Milliwatts(220000));
}

// A GPU lost in a limit's window: its energy is missing from the window's
// total, which would make that limit look cheap. The window is discarded,
// profiling stops at the maximum limit with an error naming the GPU, and
// close() still puts back the earlier limit wherever it can.
TEST_F(OptimizerSchedule, AGpuLostInAWindowStopsProfilingInsteadOfUnderCountingIt) {
    open(2);
    for (const auto& gpu : gpus_) ASSERT_TRUE(gpu->set_power_limit(Milliwatts(220000)).ok());
    PowerLimitOptimizerOptions options;
    options.profile_path = dir_ / "lost" / "profile.json";
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    // The closed form: 275 W (k = 1) is profiled over calls [62, 102).
    const int w = 1, u = 10, p = 40, window_open = w + 1 + (u + p) + u, window_close = w + 1 + 2 * (u + p);
    for (int s = 0; s < window_open + 5; ++s) training().step(*optimizer);
    ASSERT_TRUE(std::holds_alternative<state::Profiling>(optimizer->state()));
    ASSERT_EQ(std::get<state::Profiling>(optimizer->state()).limit, Milliwatts(275000));
    ASSERT_EQ(optimizer->measurements().size(), 1U);  // 300 W
    testing::fake(gpus_, 1).lose();
    // The training loop goes on without the harness's step, which reads every GPU.
    Status at_close;
    for (int call = training().call + 1; call <= window_close; ++call) {
        at_close = optimizer->on_step_begin();
        if (call < window_close) {
            ASSERT_TRUE(at_close.ok()) << "call " << call << ": " << at_close.error().describe();
        }
        training().work(gpus_[0].power_limit().value());
    }
    ASSERT_FALSE(at_close.ok()) << "the window with a lost GPU was taken as a measurement";
    EXPECT_EQ(at_close.error().code, ErrorCode::GpuLost);
    for (const char* part : {"GPU 1", "lost", "275 W", "300 W"}) {
        EXPECT_NE(at_close.error().message.find(part), std::string::npos) << part << ": " << at_close.error().message;
    }
    // No measurement for 275 W, and nothing more is profiled.
    ASSERT_EQ(optimizer->measurements().size(), 1U);
    EXPECT_EQ(optimizer->measurements().front().power_limit, Milliwatts(300000));
    EXPECT_TRUE(optimizer->done());
    EXPECT_EQ(optimizer->optimal_power_limit(), Milliwatts(300000));
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(300000));
    ASSERT_FALSE(optimizer->warnings().empty());
    EXPECT_NE(optimizer->warnings().back().find("GPU 1"), std::string::npos) << optimizer->warnings().back();
    EXPECT_NE(optimizer->warnings().back().find("275 W"), std::string::npos) << optimizer->warnings().back();
    EXPECT_TRUE(monitor_->open_windows().empty());
    EXPECT_FALSE(std::filesystem::exists(*options.profile_path));  // an incomplete profile is not saved
    ASSERT_TRUE(optimizer->on_step_begin().ok());  // done: the hooks change nothing
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(300000));
    // close(): GPU 0 gets its earlier limit back; GPU 1 cannot, and it says so.
    const Status closed = optimizer->close();
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(220000));
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.error().message.find("GPU 1"), std::string::npos) << closed.error().message;
}

}  // namespace
}  // namespace zeus::optimizer
