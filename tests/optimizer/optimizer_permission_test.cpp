// The optimizer over the real NVML backend (the simulator) on a GPU whose
// power limit this process may not change: the error is the backend's, with
// the way to get the permission. (The optimizer passing on any GPU's own
// refusal: optimizer_options_test.cpp, over fakes.)
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/sim_fixture.hpp"

namespace zeus::optimizer {
namespace {

class OptimizerPermission : public testing::SimulatedGpus {};

TEST_F(OptimizerPermission, WithoutPermissionTheErrorSaysHowToGetIt) {
    configure(R"({"clock": "virtual", "gpus": [{"model": "A40", "permissions": {"set_power_limit": false}}]})");
    const Gpus gpus = Gpus::open(simulated());
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    auto optimizer = GlobalPowerLimitOptimizer::create(gpus, *monitor, {});
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.error().code, ErrorCode::NoPermission) << optimizer.error().describe();
    EXPECT_NE(optimizer.error().hint.find("zeusd"), std::string::npos) << optimizer.error().hint;
}

}  // namespace
}  // namespace zeus::optimizer
