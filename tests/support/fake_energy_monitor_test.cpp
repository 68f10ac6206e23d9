// The fake energy monitor measures what the test scripted: its windows are
// checked here against energies and times worked out by hand.
#include "support/fake_energy_monitor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;

// Two fakes on one manual clock: GPU 0 draws 100 W, GPU 1 200 W.
class FakeEnergyMonitorTest : public ::testing::Test {
  protected:
    std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
    Gpus gpus_ =
        fake_gpus_on(clock_, 2, [](FakeGpu& gpu) { gpu.draw(Milliwatts(100'000 * (gpu.identity().index + 1))); });
    FakeEnergyMonitor monitor_{gpus_, clock_};
};

TEST_F(FakeEnergyMonitorTest, AWindowIsTheScriptedPowerTimesTheClocksAdvance) {
    EXPECT_EQ(monitor_.gpu_indices(), (std::vector<unsigned>{0, 1}));
    EXPECT_TRUE(monitor_.cpu_indices().empty());
    clock_->advance(5s);  // before the window: not in it
    const auto start = clock_->now();
    ASSERT_TRUE(monitor_.begin_window("outer").ok());
    clock_->advance(2s);
    fake(gpus_, 0).draw(Milliwatts(50'000));
    ASSERT_TRUE(monitor_.begin_window("inner").ok());
    clock_->advance(1.5s);
    const Measurement inner = monitor_.end_window("inner").value();
    const Measurement outer = monitor_.end_window("outer").value();
    EXPECT_EQ(outer.start_time, WallClock::from_system(start));
    EXPECT_DOUBLE_EQ(outer.time.count(), 3.5);
    EXPECT_DOUBLE_EQ(outer.gpu_energy.at(0).energy.count(), 100 * 2 + 50 * 1.5);
    EXPECT_DOUBLE_EQ(outer.gpu_energy.at(1).energy.count(), 200 * 3.5);
    EXPECT_DOUBLE_EQ(inner.time.count(), 1.5);
    EXPECT_DOUBLE_EQ(inner.gpu_energy.at(0).energy.count(), 50 * 1.5);
    EXPECT_DOUBLE_EQ(inner.gpu_energy.at(1).energy.count(), 200 * 1.5);
    EXPECT_EQ(outer.gpu_energy.at(0).source, EnergySource::HardwareCounter);
    EXPECT_TRUE(outer.trustworthy());
    EXPECT_TRUE(monitor_.open_windows().empty());
}

TEST_F(FakeEnergyMonitorTest, WindowsOpenAndCloseAsEnergyMonitorsDo) {
    ASSERT_TRUE(monitor_.begin_window("w").ok());
    EXPECT_EQ(monitor_.begin_window("w").error().code, ErrorCode::InvalidState);
    clock_->advance(1s);
    ASSERT_TRUE(monitor_.begin_window("w", true, /*restart=*/true).ok());  // from now on
    clock_->advance(1s);
    EXPECT_DOUBLE_EQ(monitor_.end_window("w").value().gpu_energy.at(1).energy.count(), 200.0);
    EXPECT_EQ(monitor_.end_window("w").error().code, ErrorCode::NotFound);

    ASSERT_TRUE(monitor_.begin_window("cancelled").ok());
    clock_->advance(1s);
    const Measurement cancelled = monitor_.end_window("cancelled", false, /*cancel=*/true).value();
    EXPECT_EQ(cancelled.gpu_energy.at(0).energy.count(), 0.0);
    EXPECT_EQ(cancelled.gpu_energy.at(1).energy.count(), 0.0);

    ASSERT_TRUE(monitor_.begin_window("a").ok());
    ASSERT_TRUE(monitor_.begin_window("b").ok());
    EXPECT_EQ(monitor_.open_windows(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(monitor_.reset_windows(), (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(monitor_.open_windows().empty());
}

TEST_F(FakeEnergyMonitorTest, AGpuThatStopsAnsweringIsLostInTheWindow) {
    ASSERT_TRUE(monitor_.begin_window("w").ok());
    clock_->advance(1s);
    fake(gpus_, 1).lose();
    const Measurement m = monitor_.end_window("w").value();
    EXPECT_DOUBLE_EQ(m.gpu_energy.at(0).energy.count(), 100.0);
    EXPECT_FALSE(m.gpu_energy.at(0).lost);
    const EnergyValue& lost = m.gpu_energy.at(1);
    EXPECT_TRUE(lost.lost);
    EXPECT_EQ(lost.energy.count(), 0.0);
    ASSERT_EQ(lost.warnings.size(), 1U);
    EXPECT_EQ(lost.warnings.front(), "GPU 1 stopped answering: GPU is lost (fake)");
    EXPECT_DOUBLE_EQ(m.total_gpu_energy().count(), 100.0);
    // Lost at the window's begin counts too; back by its end does not undo it.
    ASSERT_TRUE(monitor_.begin_window("w").ok());
    fake(gpus_, 1).recover();
    EXPECT_TRUE(monitor_.end_window("w").value().gpu_energy.at(1).lost);
}

TEST_F(FakeEnergyMonitorTest, EveryEdgeIsRecordedWithItsStepAndTime) {
    const auto start = clock_->now();
    monitor_.mark_step(3);
    ASSERT_TRUE(monitor_.begin_window("x").ok());
    clock_->advance(1s);
    monitor_.mark_step(7);
    ASSERT_TRUE(monitor_.end_window("x", false, true).ok());
    ASSERT_TRUE(monitor_.begin_window("y").ok());
    ASSERT_TRUE(monitor_.end_window("y").ok());
    const auto edges = monitor_.edges();
    ASSERT_EQ(edges.size(), 4U);
    EXPECT_EQ(edges[0].what, "begin");
    EXPECT_EQ(edges[0].name, "x");
    EXPECT_EQ(edges[0].step, 3);
    EXPECT_EQ(edges[0].at, start);
    EXPECT_EQ(edges[1].what, "cancel");
    EXPECT_EQ(edges[1].step, 7);
    EXPECT_EQ(edges[1].at, start + 1s);
    ASSERT_EQ(monitor_.edges("end").size(), 1U);
    EXPECT_EQ(monitor_.edges("end").front().name, "y");
    EXPECT_EQ(monitor_.edges("begin").size(), 2U);
}

}  // namespace
}  // namespace zeus::testing
