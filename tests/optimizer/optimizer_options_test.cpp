// The errors a user can run into before the optimizer changes anything: bad
// options, candidate limits, GPUs that cannot share a limit, a monitor
// without GPUs; over fake GPUs (tests/support/fake_gpu.hpp) with an A40's
// limits, 100–300 W, the numbers the messages must name.
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "support/fake_gpu.hpp"
#include "support/test_directory.hpp"

namespace zeus::optimizer {
namespace {

// Fake GPUs with an A40's limits (100–300 W, 300 W by default), a monitor
// over them and a scratch directory for profile files.
class OptimizerOptions : public ::testing::Test {
  protected:
    // `count` A40-like GPUs; `min_w` of the last one's lowest limit.
    void open(unsigned count, int last_min_w = 100) {
        gpus_ = testing::fake_gpus(count, [&](testing::FakeGpu& gpu) {
            const int min_w = gpu.identity().index + 1 == count ? last_min_w : 100;
            gpu.set_constraints(Milliwatts(min_w * 1000), Milliwatts(300'000), Milliwatts(300'000));
        });
        monitor_ = EnergyMonitor::open(gpus_, nullptr, nullptr).value();
    }
    std::unique_ptr<GlobalPowerLimitOptimizer> create(PowerLimitOptimizerOptions options = {}) {
        auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, std::move(options));
        EXPECT_TRUE(optimizer.ok()) << optimizer.error().describe();
        return optimizer.ok() ? std::move(optimizer).value() : nullptr;
    }

    testing::TestDirectory directory_;
    const std::filesystem::path& dir_ = directory_.path();
    Gpus gpus_;
    std::unique_ptr<EnergyMonitor> monitor_;
};

TEST_F(OptimizerOptions, BadOptionsAreRefusedBeforeAnythingChanges) {
    open(1);
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
    o = {};  // measured on a GPU that allows 400 W; these stop at 300 W
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
TEST_F(OptimizerOptions, ListedLimitsAreTheCandidates) {
    open(1);
    PowerLimitOptimizerOptions o;
    o.power_limits = {Watts(225), Watts(300), Watts(260), Watts(100), Watts(260)};
    auto optimizer = create(o);
    ASSERT_NE(optimizer, nullptr);
    const std::vector<Milliwatts> expected{Milliwatts(300000), Milliwatts(260000), Milliwatts(225000),
                                           Milliwatts(100000)};
    EXPECT_EQ(optimizer->candidates(), expected);
}

TEST_F(OptimizerOptions, GpusWithDifferentLimitsCannotShareOneLimit) {
    open(2, /*last_min_w=*/150);
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(optimizer.error().message.find("100 W–300 W"), std::string::npos) << optimizer.error().message;
    EXPECT_NE(optimizer.error().message.find("150 W–300 W"), std::string::npos) << optimizer.error().message;
}

// The GPU's own refusal (its code and its fix) reaches the caller as it was
// (the NVML backend's words: optimizer_permission_test.cpp).
TEST_F(OptimizerOptions, AGpuThatRefusesControlIsRefusedWithItsOwnError) {
    open(2);
    testing::fake(gpus_, 1).fail(testing::FakeGpu::Call::CheckPowerLimitControl,
                                 Error{ErrorCode::NoPermission, "GPU 1: no permission", "use zeusd", 0});
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NoPermission);
    EXPECT_EQ(optimizer.error().message, "GPU 1: no permission");
    EXPECT_EQ(optimizer.error().hint, "use zeusd");
    EXPECT_EQ(gpus_[1].power_limit().value(), Milliwatts(300'000));
}

TEST_F(OptimizerOptions, AMonitorWithoutGpusIsAnError) {
    open(1);
    EnergyMonitorOptions none;
    none.gpu_indices = std::vector<unsigned>{};
    auto empty = EnergyMonitor::open(gpus_, nullptr, nullptr, none).value();
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *empty, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace zeus::optimizer
