// The measurement loop (zeus/monitor/sampling_loop.hpp) that `zeus power`,
// `zeus energy` and `python -m zeus_native.monitor` run: ticks every period
// without bursts, stop on request or duration, one window around it. The
// waiter is a plain sleep here, as the CLI's signal wait is one with a wake-up.
#include "zeus/monitor/sampling_loop.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace zeus {
namespace {

using std::chrono::milliseconds;

StopWait sleep_until_told(const bool& stop) {
    return [&stop](std::chrono::nanoseconds timeout) {
        EXPECT_GE(timeout.count(), 0);
        EXPECT_LE(timeout, std::chrono::seconds(1));
        std::this_thread::sleep_for(timeout);
        return stop;
    };
}

TEST(SamplingLoop, TicksFollowThePeriodUntilAStopRequest) {
    const auto period = milliseconds(20);
    bool stop = false;
    std::vector<Timestamp> ticks;
    const auto start = MonitorClock::now();
    run_sampling_loop(start, {period, std::nullopt}, sleep_until_told(stop), [&](Timestamp now) {
        ticks.push_back(now);
        stop = ticks.size() == 3;
    });
    ASSERT_EQ(ticks.size(), 3U);  // the request is seen before a fourth tick
    for (std::size_t k = 0; k < ticks.size(); ++k) {
        EXPECT_GE(ticks[k] - start, period * static_cast<int>(k + 1)) << k;  // never early
    }
}

TEST(SamplingLoop, ADurationEndsTheLoopWithoutTicksWhenThereIsNoPeriod) {
    bool stop = false;
    int ticks = 0;
    const auto start = MonitorClock::now();
    run_sampling_loop(start, {std::nullopt, milliseconds(60)}, sleep_until_told(stop), [&](Timestamp) { ++ticks; });
    const auto took = MonitorClock::now() - start;
    EXPECT_EQ(ticks, 0);
    EXPECT_GE(took, milliseconds(60));
    EXPECT_LT(took, std::chrono::seconds(10));  // generous: a loaded machine, but it does end
}

TEST(SamplingLoop, ALateTickDoesNotBurstTheMissedOnes) {
    const auto period = milliseconds(10);
    const auto stall = milliseconds(80);  // eight periods missed
    bool stop = false;
    std::vector<Timestamp> ticks;
    run_sampling_loop(MonitorClock::now(), {period, std::nullopt}, sleep_until_told(stop), [&](Timestamp now) {
        ticks.push_back(now);
        if (ticks.size() == 1) std::this_thread::sleep_for(stall);  // e.g. the process was suspended
        stop = ticks.size() == 4;
    });
    ASSERT_EQ(ticks.size(), 4U);
    // One tick comes at once for the stalled period; after it the period holds again.
    EXPECT_GE(ticks[1] - ticks[0], stall);
    EXPECT_GE(ticks[2] - ticks[1], period);
    EXPECT_GE(ticks[3] - ticks[1], 2 * period);
}

class FakeMonitor : public EnergyMonitor {
  public:
    Status begin_window(std::string_view name, bool sync, bool) override {
        calls.push_back("begin " + std::string(name) + (sync ? " sync" : ""));
        if (fail_begin) return Error{ErrorCode::InvalidState, "already open", ""};
        return {};
    }
    Result<Measurement> end_window(std::string_view name, bool sync, bool) override {
        calls.push_back("end " + std::string(name) + (sync ? " sync" : ""));
        Measurement m;
        m.time = Seconds(1.5);
        return m;
    }
    std::vector<std::string> reset_windows() override { return {}; }
    [[nodiscard]] std::vector<std::string> open_windows() const override { return {}; }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return none_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return none_; }
    std::vector<std::string> calls;
    bool fail_begin = false;

  private:
    std::vector<unsigned> none_;
};

TEST(MeasureWindow, BeginsRunsAndEndsOneWindowWithoutSync) {
    FakeMonitor monitor;
    bool stop = false;
    int waits = 0;
    const StopWait wait = [&](std::chrono::nanoseconds) {
        monitor.calls.push_back("wait");
        return ++waits == 2 || stop;
    };
    const auto run = measure_window(monitor, "zeus.energy", {}, wait, [&](Timestamp) { monitor.calls.push_back("begun"); });
    ASSERT_TRUE(run.measurement.ok());
    EXPECT_DOUBLE_EQ(run.measurement->time.count(), 1.5);
    EXPECT_LE(run.start, run.end);
    const std::vector<std::string> expected = {"begin zeus.energy", "begun", "wait", "wait", "end zeus.energy"};
    EXPECT_EQ(monitor.calls, expected);
}

TEST(MeasureWindow, AWindowThatCannotBeginRunsNoLoop) {
    FakeMonitor monitor;
    monitor.fail_begin = true;
    bool waited = false;
    const auto run = measure_window(monitor, "w", {}, [&](std::chrono::nanoseconds) { return waited = true; });
    ASSERT_FALSE(run.measurement.ok());
    EXPECT_EQ(run.measurement.error().code, ErrorCode::InvalidState);
    EXPECT_FALSE(waited);
    EXPECT_EQ(monitor.calls, std::vector<std::string>{"begin w"});
}

}  // namespace
}  // namespace zeus
