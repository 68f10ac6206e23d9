// The errors a user can run into before the optimizer changes anything: bad
// options, candidate limits, GPUs that cannot share a limit, permissions.
#include "optimizer/optimizer_schedule_fixture.hpp"

namespace zeus::optimizer {
namespace {

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

}  // namespace
}  // namespace zeus::optimizer
