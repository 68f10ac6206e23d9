// Where GpuFleet runs control commands: a quick one on the caller's thread
// when its GPU is idle, anything that may be slow (an override, a ledger
// write) and anything behind it on the control executor, in arrival order.
#include "zeusd/gpu_fleet.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"

namespace zeus::zeusd {
namespace {

// The fake GPU starts at a 700 W limit, so setting it again reads back as set.
ControlCommand keep_power_limit() {
    ControlCommand command;
    command.kind = GpuCommand::SetPowerLimit;
    command.power_limit_mw = 700'000;
    return command;
}

ControlCommand reset_gpu_clocks() {
    ControlCommand command;
    command.kind = GpuCommand::ResetGpuLockedClocks;
    return command;
}

class LedgerPath {
  public:
    LedgerPath()
        : path_(std::filesystem::path(::testing::TempDir()) /
                ("zeusd-fleet-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".ledger")) {
        std::filesystem::remove(path_);
    }
    ~LedgerPath() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    LedgerPath(const LedgerPath&) = delete;
    LedgerPath& operator=(const LedgerPath&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

// The control executor is never run here unless the test runs it, so a
// command that was handed to it has not run when submit returns.
TEST(GpuFleetTest, RunsAQuickCommandOnTheCallingThreadWhenItsGpuIsIdle) {
    boost::asio::io_context control;
    GpuFleet fleet(testing::fake_gpus(1), control.get_executor());
    std::vector<std::thread::id> ran_on;
    fleet.submit(keep_power_limit(), 42, false, [&](Status status) {
        EXPECT_TRUE(status) << status.error().describe();
        ran_on.push_back(std::this_thread::get_id());
    });
    ASSERT_EQ(ran_on.size(), 1U) << "an idle GPU's quick command waited for the control executor";
    EXPECT_EQ(ran_on[0], std::this_thread::get_id());
    EXPECT_EQ(control.poll(), 0U);
    EXPECT_TRUE(fleet.ledger().has(0, Setting::PowerLimit)) << "the change is still on the books";
}

TEST(GpuFleetTest, HandsAnOverriddenCommandToTheControlExecutor) {
    boost::asio::io_context control;
    int override_runs = 0;
    GpuFleet fleet(testing::fake_gpus(1), control.get_executor(),
                   [&](const ControlCommand&) -> std::optional<Status> {
                       ++override_runs;
                       return Status{};
                   });
    int answers = 0;
    fleet.submit(reset_gpu_clocks(), 42, false, [&](Status status) {
        EXPECT_TRUE(status);
        ++answers;
    });
    EXPECT_EQ(answers, 0) << "an override (a vendor tool) ran on a request thread";
    control.run();
    EXPECT_EQ(answers, 1);
    EXPECT_EQ(override_runs, 1);
}

TEST(GpuFleetTest, KeepsLedgerWritesOffTheCallingThreadAndTheOrderPerGpu) {
    boost::asio::io_context control;
    const LedgerPath ledger;
    GpuFleet fleet(testing::fake_gpus(1), control.get_executor(), {}, ledger.path());
    std::vector<std::string> answered;
    const auto answer = [&](std::string name) {
        return [&answered, name](Status status) {
            EXPECT_TRUE(status) << name << ": " << status.error().describe();
            answered.push_back(name);
        };
    };
    // A first change writes the ledger file: queued.
    fleet.submit(keep_power_limit(), 42, false, answer("first change"));
    // Quick on its own, but its GPU is busy: it waits its turn.
    fleet.submit(reset_gpu_clocks(), 42, false, answer("reset behind it"));
    EXPECT_TRUE(answered.empty());
    control.run();
    EXPECT_EQ(answered, (std::vector<std::string>{"first change", "reset behind it"}));
    ASSERT_TRUE(std::filesystem::exists(ledger.path()));

    // The same client repeating its change leaves the file as it is: inline.
    fleet.submit(keep_power_limit(), 42, false, answer("repeat"));
    EXPECT_EQ(answered.back(), "repeat");
    // A new owner is a ledger write again, and so is a persist that takes the record off the books.
    fleet.submit(keep_power_limit(), 77, false, answer("new owner"));
    fleet.submit(keep_power_limit(), 77, true, answer("persist"));
    EXPECT_EQ(answered.size(), 3U);
    control.restart();
    control.run();
    EXPECT_EQ(answered, (std::vector<std::string>{"first change", "reset behind it", "repeat", "new owner", "persist"}));
    EXPECT_FALSE(fleet.ledger().has(0, Setting::PowerLimit));
}

}  // namespace
}  // namespace zeus::zeusd
