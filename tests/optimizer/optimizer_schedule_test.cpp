// The optimizer's state machine on simulated A40s: which limit is in force
// at every step, when windows open and close, interruptions at epoch ends,
// warmup_steps = 0, restoring the earlier limit, the profile file, and the
// errors a user can run into. Expected schedules come from the closed form
// in reference/optimizers.md §1.2 (candidate k is set on call w+1+k(u+p),
// its window covers calls [w+1+k(u+p)+u, w+1+(k+1)(u+p)), Done on call
// w+1+N(u+p)), not from the code.
#include <gtest/gtest.h>
#include <zeus_sim/zeus_sim.h>

#include <cmath>
#include <deque>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "optimizer/optimizer_harness.hpp"
#include "zeus/carbon/carbon_aware_power_limit.hpp"
#include "zeus/carbon/intensity_file.hpp"
#include "zeus/optimizer/power_limit_profile.hpp"

namespace zeus::optimizer {
namespace {

using testing::RecordingMonitor;
using testing::TraceTraining;

constexpr const char* kTwoA40s = R"({"clock": "virtual", "gpus": [{"model": "A40", "count": 2}]})";
constexpr const char* kOneA40 = R"({"clock": "virtual", "gpus": [{"model": "A40"}]})";

// The closed-form GPU of reference/optimizers.md §6.1 b as a trace: one
// epoch is 40 steps of 0.1·(190/(p − 60))^0.6 s (0.1 s from 250 W up), drawing
// min(p, 250) W.
double step_time(double p) { return p >= 250 ? 0.1 : 0.1 * std::pow(190.0 / (p - 60.0), 0.6); }

int define_model_trace() {
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

std::vector<Milliwatts> every_25w_from(int max_w, int min_w) {
    std::vector<Milliwatts> out;
    for (int p = max_w; p >= min_w; p -= 25) out.emplace_back(p * 1000);
    return out;
}

TEST_F(OptimizerSchedule, StepsFollowTheDocumentedSchedule) {
    open(kTwoA40s);
    auto optimizer = create();
    ASSERT_TRUE(optimizer);
    const auto candidates = every_25w_from(300, 100);
    ASSERT_EQ(optimizer->candidates(), candidates);
    EXPECT_EQ(optimizer->world_size(), 2);
    const int w = 1, u = 10, p = 40, n = static_cast<int>(candidates.size());
    const int done_call = w + 1 + n * (u + p);
    ASSERT_EQ(done_call, 452);  // the defaults on a 100–300 W GPU, as the reference says
    TraceTraining& t = training();
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
        EXPECT_EQ(begins[k].call, w + 1 + k * (u + p) + u) << k;
        EXPECT_EQ(ends[k].call, w + 1 + (k + 1) * (u + p)) << k;
        EXPECT_EQ(begins[k].name, power_limit_window_name(candidates[k]));
        // The window holds exactly the p steps before its end call.
        double seconds = 0;
        for (int call = begins[k].call; call < ends[k].call; ++call) seconds += t.step_seconds[call - 1];
        EXPECT_NEAR(m.time.count(), seconds, 1e-6 * seconds) << k;
        const double truth = ends[k].truth_j - begins[k].truth_j;  // both GPUs
        EXPECT_NEAR(m.energy.count(), truth, 1e-3 * truth) << k;
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
    open(kOneA40);
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
        EXPECT_EQ(begins[k].call, w + 1 + k * p) << k;
        EXPECT_EQ(training().limit_during[begins[k].call - 1], candidates[k]) << k;
    }
}

// Epoch ends interrupt warm-ups and windows; every measured window must still
// cover exactly profile_steps steps at its own limit inside one epoch.
void check_interrupted_run(int steps_per_epoch, GlobalPowerLimitOptimizer& optimizer, TraceTraining& t,
                           const RecordingMonitor& monitor, const std::vector<Milliwatts>& candidates) {
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

    const RecordingMonitor::Event* open = nullptr;
    int cancels = 0;
    for (const auto& e : monitor.events) {
        if (e.what == "begin") {
            open = &e;
            continue;
        }
        ASSERT_NE(open, nullptr);
        ASSERT_EQ(e.name, open->name);
        if (e.what == "cancel") {
            ++cancels;
            // Cancelled exactly at an epoch end, inside the window.
            EXPECT_NE(std::find(epoch_end_after.begin(), epoch_end_after.end(), e.call), epoch_end_after.end());
        } else {
            EXPECT_EQ(e.call - open->call, p) << open->name;
            for (int call = open->call; call < e.call; ++call) {
                EXPECT_EQ(power_limit_window_name(t.limit_during[call - 1]), open->name) << call;
            }
            for (int end : epoch_end_after) EXPECT_FALSE(end >= open->call && end < e.call) << open->name;
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
        open(kOneA40);
        auto optimizer = create();
        ASSERT_TRUE(optimizer);
        check_interrupted_run(steps_per_epoch, *optimizer, training(), *monitor_, every_25w_from(300, 100));
        ASSERT_FALSE(HasFatalFailure()) << steps_per_epoch;
        optimizer.reset();
    }
}

TEST_F(OptimizerSchedule, AnEpochEndPutsTheMaximumBackUntilTheNextStep) {
    open(kOneA40);
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
    open(kOneA40);
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
    open(kOneA40);
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
    open(kTwoA40s);
    for (const auto& gpu : gpus_) ASSERT_TRUE(gpu->set_power_limit(Milliwatts(220000)).ok());
    auto optimizer = create();
    ASSERT_TRUE(optimizer);
    EXPECT_EQ(gpus_[1].power_limit().value(), Milliwatts(300000));
    for (int s = 0; s < 30; ++s) training().step(*optimizer);  // inside 300 W's window
    ASSERT_TRUE(std::holds_alternative<state::Profiling>(optimizer->state()));
    ASSERT_TRUE(optimizer->close().ok());
    for (const auto& gpu : gpus_) EXPECT_EQ(gpu->power_limit().value(), Milliwatts(220000));
    EXPECT_TRUE(inner_->open_windows().empty());  // the open window was cancelled
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
    open(kTwoA40s);
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
    ASSERT_EQ(zeusSimInjectFault(1, "lost", 1), ZEUS_SIM_OK) << zeusSimLastError();
    // The training loop goes on without the harness, which reads every GPU.
    const int trace = define_model_trace();
    Status at_close;
    for (int call = training().call + 1; call <= window_close; ++call) {
        at_close = optimizer->on_step_begin();
        if (call < window_close) {
            ASSERT_TRUE(at_close.ok()) << "call " << call << ": " << at_close.error().describe();
        }
        double elapsed = 0;
        ASSERT_EQ(zeusSimRunTraceWork(0, trace, 1.0 / 40, &elapsed), ZEUS_SIM_OK) << zeusSimLastError();
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
    EXPECT_TRUE(inner_->open_windows().empty());
    EXPECT_FALSE(std::filesystem::exists(*options.profile_path));  // an incomplete profile is not saved
    ASSERT_TRUE(optimizer->on_step_begin().ok());  // done: the hooks change nothing
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(300000));
    // close(): GPU 0 gets its earlier limit back; GPU 1 cannot, and it says so.
    const Status closed = optimizer->close();
    EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(220000));
    ASSERT_FALSE(closed.ok());
    EXPECT_NE(closed.error().message.find("GPU 1"), std::string::npos) << closed.error().message;
    EXPECT_EQ(zeusSimInjectFault(1, "lost", 0), ZEUS_SIM_OK);
}

TEST_F(OptimizerSchedule, ASavedProfileSkipsProfilingAndServesAnySelector) {
    open(kOneA40);
    const auto path = dir_ / "profiles" / "model.json";
    PowerLimitOptimizerOptions options;
    options.profile_path = path;
    options.warmup_steps = 2;
    options.profile_steps = 10;
    auto first = create(options);
    ASSERT_TRUE(first);
    EXPECT_FALSE(std::filesystem::exists(path));
    training().run_to_done(*first);
    ASSERT_TRUE(std::filesystem::exists(path));
    const auto saved = load_power_limit_profile(path).value();
    ASSERT_EQ(saved.measurements.size(), first->measurements().size());
    EXPECT_EQ(saved.profile_steps, 10U);
    first.reset();

    for (const SelectorPtr& selector : standard_selectors()) {
        const auto begun = monitor_->events.size();
        options.selector = selector;
        auto second = create(options);
        ASSERT_TRUE(second);
        EXPECT_TRUE(second->done());
        const auto expected = selector->select(saved.measurements, SelectionContext{1}).value();
        EXPECT_EQ(second->optimal_power_limit(), expected) << selector->name();
        EXPECT_EQ(gpus_[0].power_limit().value(), expected) << selector->name();
        EXPECT_EQ(monitor_->events.size(), begun);  // nothing measured
        const auto report = second->report().value();
        EXPECT_EQ(report.profile_steps, 10U);
        EXPECT_EQ(report.choices.front().selector, selector->name());
    }
}

TEST_F(OptimizerSchedule, TheReportComparesSelectorsAgainstTheMaximumLimit) {
    open(kOneA40);
    PowerLimitOptimizerOptions options;
    options.warmup_steps = 1;
    options.profile_steps = 8;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    EXPECT_FALSE(optimizer->report().ok());  // nothing measured yet
    training().run_to_done(*optimizer);
    const auto report = optimizer->report(standard_selectors()).value();
    const auto& ms = optimizer->measurements();
    ASSERT_EQ(report.rows.size(), ms.size());
    EXPECT_EQ(report.choices.size(), 4U);  // zeus-cost once: it is in use and in the standard set
    EXPECT_TRUE(report.choices.front().in_use);
    for (std::size_t k = 0; k < ms.size(); ++k) {
        EXPECT_DOUBLE_EQ(report.rows[k].time_per_step->count(), ms[k].time.count() / 8);
        EXPECT_DOUBLE_EQ(report.rows[k].energy_per_step->count(), ms[k].energy.count() / 8);
    }
    for (const auto& choice : report.choices) {
        const auto& at = *std::find_if(ms.begin(), ms.end(), [&](auto& m) { return m.power_limit == choice.power_limit; });
        EXPECT_DOUBLE_EQ(choice.energy_saving, 1 - at.energy.count() / ms.front().energy.count()) << choice.selector;
        EXPECT_DOUBLE_EQ(choice.slowdown, at.time.count() / ms.front().time.count() - 1) << choice.selector;
    }
    const std::string text = report.to_string();
    for (const auto& m : ms) {
        EXPECT_NE(text.find(std::to_string(m.power_limit.count() / 1000) + " W"), std::string::npos) << text;
    }
    const auto json = nlohmann::json::parse(report.to_json());
    EXPECT_EQ(json["measurements"].size(), ms.size());
    EXPECT_EQ(json["choices"][0]["selector"], "zeus-cost:eta=0.5");
}

// A user-defined rule: the lowest limit within 2% of the least energy.
class NearlyLeastEnergy final : public OptimumSelector {
  public:
    [[nodiscard]] std::string name() const override { return "nearly-least-energy"; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> ms,
                                            const SelectionContext&) const override {
        double least = INFINITY;
        for (const auto& m : ms) least = std::min(least, m.energy.count());
        Milliwatts pick = ms.front().power_limit;
        for (const auto& m : ms) {
            if (m.energy.count() <= 1.02 * least) pick = std::min(pick, m.power_limit);
        }
        return pick;
    }
};

TEST_F(OptimizerSchedule, UserDefinedSelectorsPlugIn) {
    open(kOneA40);
    PowerLimitOptimizerOptions options;
    options.selector = std::make_shared<NearlyLeastEnergy>();
    options.warmup_steps = 1;
    options.profile_steps = 4;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    training().run_to_done(*optimizer);
    EXPECT_EQ(optimizer->optimal_power_limit(), NearlyLeastEnergy().select(optimizer->measurements(), {}).value());
    EXPECT_EQ(optimizer->report().value().choices.front().selector, "nearly-least-energy");
}

// Rank 1 of 2 whose partner measured exactly what it did.
class MirroredRank final : public profile::Communicator {
  public:
    [[nodiscard]] int rank() const override { return 1; }
    [[nodiscard]] int size() const override { return 2; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, profile::ReduceOp op) override {
        if (op == profile::ReduceOp::Sum) {
            for (double& v : values) v *= 2;
        }
        return values;
    }
};

TEST_F(OptimizerSchedule, RanksSumEnergyTakeTheSlowestTimeAndCountEveryGpu) {
    open(kOneA40);
    MirroredRank ranks;
    PowerLimitOptimizerOptions options;
    options.communicator = &ranks;
    options.warmup_steps = 3;  // past the power sensor's 100 ms refresh after each limit change
    options.profile_steps = 6;
    auto optimizer = create(options);
    ASSERT_TRUE(optimizer);
    EXPECT_EQ(optimizer->world_size(), 2);
    training().run_to_done(*optimizer);
    const auto begins = events("begin");
    const auto ends = events("end");
    ASSERT_EQ(begins.size(), optimizer->measurements().size());
    for (std::size_t k = 0; k < begins.size(); ++k) {
        const double local = ends[k].truth_j - begins[k].truth_j;
        EXPECT_NEAR(optimizer->measurements()[k].energy.count(), 2 * local, 2e-3 * local);
    }
    EXPECT_EQ(optimizer->optimal_power_limit(),
              zeus_cost(0.5, 2).value()->select(optimizer->measurements(), {}).value());
}

// Rank 0 of 2 whose partner failed its own checks: the first collective
// (the setup agreement) says so.
class FailedPartner final : public profile::Communicator {
  public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int size() const override { return 2; }
    [[nodiscard]] Result<std::vector<double>> all_reduce(std::vector<double> values, profile::ReduceOp op) override {
        if (calls++ == 0 && op == profile::ReduceOp::Max) values.assign(values.size(), 1.0);
        return values;
    }
    int calls = 0;
};

TEST_F(OptimizerSchedule, WhenAnotherRankFailsEveryRankSaysSoInsteadOfWaiting) {
    open(kOneA40);
    FailedPartner partner;
    PowerLimitOptimizerOptions options;
    options.communicator = &partner;
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, options);
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::InvalidState);
    EXPECT_NE(optimizer.error().message.find("another rank"), std::string::npos);
    EXPECT_EQ(partner.calls, 1);  // no further collective that the failed rank would never join
    // This rank's own failure still takes part in the agreement, then is reported as itself.
    FailedPartner fine_partner;
    options.communicator = &fine_partner;
    options.profile_steps = 0;
    auto refused = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("profile_steps"), std::string::npos);
    EXPECT_EQ(fine_partner.calls, 1);
}

TEST_F(OptimizerSchedule, BadOptionsAreRefusedBeforeAnythingChanges) {
    open(kOneA40);
    ASSERT_TRUE(gpus_[0].set_power_limit(Milliwatts(230000)).ok());
    const auto refuse = [&](PowerLimitOptimizerOptions options, ErrorCode code, const char* says) {
        auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, std::move(options));
        ASSERT_FALSE(optimizer.ok()) << says;
        EXPECT_EQ(optimizer.error().code, code) << optimizer.error().describe();
        EXPECT_NE(optimizer.error().message.find(says), std::string::npos) << optimizer.error().message;
        EXPECT_FALSE(optimizer.error().hint.empty());
        EXPECT_EQ(gpus_[0].power_limit().value(), Milliwatts(230000));
    };
    PowerLimitOptimizerOptions o;
    o.profile_steps = 0;
    refuse(o, ErrorCode::InvalidArgument, "profile_steps");
    o = {};
    o.pl_step = Watts(0);
    refuse(o, ErrorCode::InvalidArgument, "pl_step");
    o = {};
    o.pl_step = Watts(NAN);
    refuse(o, ErrorCode::InvalidArgument, "pl_step");
    o = {};
    std::ofstream(dir_ / "blocker") << "a file, not a directory";
    o.profile_path = dir_ / "blocker" / "profile.json";
    refuse(o, ErrorCode::NoPermission, "cannot be written");
    o = {};
    std::ofstream(dir_ / "broken.json") << "{\"measurements\": 5}";
    o.profile_path = dir_ / "broken.json";
    refuse(o, ErrorCode::InvalidConfig, "broken.json");
    o = {};  // measured on a GPU that allows 400 W; this A40 stops at 300 W
    std::ofstream(dir_ / "a100.json") << R"({"measurements": [{"power_limit": 400, "energy": 9, "time": 1}]})";
    o.profile_path = dir_ / "a100.json";
    refuse(o, ErrorCode::InvalidConfig, "400 W, outside what these GPUs allow (100 W–300 W)");
    o = {};
    o.power_limits = {Watts(300), Watts(350)};
    refuse(o, ErrorCode::InvalidArgument, "power_limits holds 350 W, outside the GPUs' range 100 W to 300 W");
    o = {};
    o.power_limits = {Watts(NAN)};
    refuse(o, ErrorCode::InvalidArgument, "power_limits holds nan W");
}

// Listed limits (a trace's, unevenly spaced) are the candidates, highest first, each once.
TEST_F(OptimizerSchedule, ListedLimitsAreTheCandidates) {
    open(kOneA40);
    PowerLimitOptimizerOptions o;
    o.power_limits = {Watts(225), Watts(300), Watts(260), Watts(100), Watts(260)};
    auto optimizer = create(o);
    ASSERT_NE(optimizer, nullptr);
    const std::vector<Milliwatts> expected{Milliwatts(300000), Milliwatts(260000), Milliwatts(225000),
                                           Milliwatts(100000)};
    EXPECT_EQ(optimizer->candidates(), expected);
}

TEST_F(OptimizerSchedule, GpusWithDifferentLimitsCannotShareOneLimit) {
    open(R"({"clock": "virtual", "gpus": [{"model": "A40"}, {"model": "A40", "power": {"limit_min_w": 150}}]})");
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(optimizer.error().message.find("100 W–300 W"), std::string::npos) << optimizer.error().message;
    EXPECT_NE(optimizer.error().message.find("150 W–300 W"), std::string::npos) << optimizer.error().message;
}

TEST_F(OptimizerSchedule, WithoutPermissionTheErrorSaysHowToGetIt) {
    open(R"({"clock": "virtual", "gpus": [{"model": "A40", "permissions": {"set_power_limit": false}}]})");
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NoPermission) << optimizer.error().describe();
    EXPECT_NE(optimizer.error().hint.find("zeusd"), std::string::npos) << optimizer.error().hint;
}

TEST_F(OptimizerSchedule, AMonitorWithoutGpusIsAnError) {
    open(kOneA40);
    EnergyMonitorOptions none;
    none.gpu_indices = std::vector<unsigned>{};
    auto empty = EnergyMonitor::open(gpus_, nullptr, nullptr, none).value();
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *empty, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NotFound);
}

// The carbon selector in the optimizer: after profiling, each step in a new
// hour of a recorded intensity file re-selects exactly when the intensity
// moved more than 10% from the one the limit was chosen at, and the limit is
// then the argmin of eta·E·I/I_first + (1 − eta)·MaxPower·T computed here.
TEST_F(OptimizerSchedule, CarbonSelectorReselectsWhenTheIntensityMovesPastItsThreshold) {
    open(kTwoA40s);
    const std::vector<double> intensity{100, 105, 1000, 950, 300, 310, 2000, 100};
    const auto csv = dir_ / "intensity.csv";
    {
        std::ofstream out(csv);
        out << "datetime,carbon_intensity\n";
        for (std::size_t h = 0; h < intensity.size(); ++h) {
            out << "2024-12-01T" << (h < 10 ? "0" : "") << h << ":00:00Z," << intensity[h] << "\n";
        }
    }
    auto provider = carbon::intensity_from_file(csv.string());
    ASSERT_TRUE(provider.ok()) << provider.error().describe();
    using namespace std::chrono;
    const carbon::UtcTime day{sys_days{year{2024} / December / 1}};
    std::size_t hour = 0;
    auto intensity_now = carbon::intensity_now(std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(provider).value()),
                                               [&] { return day + hours(hour) + minutes(30); });

    auto selector = carbon::parse_selector_with_carbon("carbon:eta=0.5,threshold=0.1", intensity_now);
    ASSERT_TRUE(selector.ok()) << selector.error().describe();
    auto optimizer = profiled_with(*selector);
    ASSERT_TRUE(optimizer);
    TraceTraining& t = training();

    const auto& ms = optimizer->measurements();
    auto expected_limit = [&](double scale) {
        double best = INFINITY;
        Milliwatts chosen{0};
        for (const auto& m : ms) {
            const double cost = 0.5 * m.energy.count() * scale + 0.5 * 300.0 * 2 * m.time.count();
            if (cost < best) {
                best = cost;
                chosen = m.power_limit;
            }
        }
        return chosen;
    };
    EXPECT_EQ(optimizer->optimal_power_limit(), expected_limit(1.0));  // chosen at the first intensity
    double chosen_at = intensity[0];
    int reselections = 0;
    std::set<std::int64_t> distinct;
    for (hour = 1; hour < intensity.size(); ++hour) {
        if (std::abs(intensity[hour] - chosen_at) > 0.1 * chosen_at) {
            chosen_at = intensity[hour];
            ++reselections;
        }
        t.step(*optimizer);
        ASSERT_FALSE(HasFatalFailure());
        const Milliwatts expected = expected_limit(chosen_at / intensity[0]);
        distinct.insert(expected.count());
        EXPECT_EQ(t.limit_during.back(), expected) << "hour " << hour << " at " << intensity[hour];
        EXPECT_EQ(optimizer->optimal_power_limit(), expected) << "hour " << hour;
        EXPECT_EQ(optimizer->reselections(), reselections) << "hour " << hour;
    }
    EXPECT_EQ(reselections, 4);  // 1000, 300, 2000, 100 (105, 950 and 310 are within 10%)
    EXPECT_GE(distinct.size(), 2U) << "the intensities must move the choice for this test to mean anything";

    EXPECT_EQ(optimizer->selector()->name(), "carbon:eta=0.5,threshold=0.1");
}

TEST_F(OptimizerSchedule, AFailedCarbonReselectionKeepsTheLimitAndWarns) {
    open(kOneA40);
    // Reads in order: the choice at the end of profiling, then a stale() check that sees a 10× move,
    // then the re-selection's read, which fails.
    std::deque<Result<double>> reads{100.0, 1000.0,
                                     Error{ErrorCode::NoData, "provider unreachable", "check the network", 0}};
    auto selector = carbon::carbon_aware_selector(
        [&]() -> Result<double> {
            if (reads.empty()) return 1000.0;
            auto r = reads.front();
            reads.pop_front();
            return r;
        },
        {});
    ASSERT_TRUE(selector.ok()) << selector.error().describe();
    auto optimizer = profiled_with(*selector);
    ASSERT_TRUE(optimizer);
    TraceTraining& t = training();
    const auto chosen = optimizer->optimal_power_limit();
    ASSERT_TRUE(chosen);
    t.step(*optimizer);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(reads.empty());
    EXPECT_EQ(optimizer->optimal_power_limit(), chosen);
    EXPECT_EQ(t.limit_during.back(), *chosen);
    EXPECT_EQ(optimizer->reselections(), 0);
    ASSERT_FALSE(optimizer->warnings().empty());
    EXPECT_NE(optimizer->warnings().back().find("provider unreachable"), std::string::npos);
}

TEST_F(OptimizerSchedule, CarbonSelectorSpecsAreChecked) {
    auto constant = carbon::constant_intensity(300);
    ASSERT_TRUE(constant.ok());
    auto now = carbon::intensity_now(std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(constant).value()));
    EXPECT_TRUE(carbon::parse_selector_with_carbon("carbon", now).ok());
    EXPECT_TRUE(carbon::parse_selector_with_carbon("zeus-cost:eta=0.3", nullptr).ok());
    for (const char* bad : {"carbon:eta=2", "carbon:threshold=-1", "carbon:reference=0", "carbon:speed=1",
                            "carbon:eta"}) {
        auto s = carbon::parse_selector_with_carbon(bad, now);
        ASSERT_FALSE(s.ok()) << bad;
        EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument) << bad;
    }
    auto missing = carbon::parse_selector_with_carbon("carbon:eta=0.5", nullptr);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().describe().find("--carbon-intensity"), std::string::npos) << missing.error().describe();
}

}  // namespace
}  // namespace zeus::optimizer
