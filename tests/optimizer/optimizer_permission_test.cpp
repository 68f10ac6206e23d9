// The optimizer over the real NVML backend (the simulator) on a GPU whose
// power limit this process may not change: the error is the backend's, with
// the way to get the permission.
#include "optimizer/optimizer_schedule_fixture.hpp"

namespace zeus::optimizer {
namespace {

TEST_F(OptimizerSchedule, WithoutPermissionTheErrorSaysHowToGetIt) {
    open(R"({"clock": "virtual", "gpus": [{"model": "A40", "permissions": {"set_power_limit": false}}]})");
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus_, *monitor_, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NoPermission) << optimizer.error().describe();
    EXPECT_NE(optimizer.error().hint.find("zeusd"), std::string::npos) << optimizer.error().hint;
}

}  // namespace
}  // namespace zeus::optimizer
