// gpu_config() on the simulator's GPUs through the real NVML backend: what
// the client registers with the server is the original's GpuConfig --
// max_power = GPU 0's maximum power limit in whole W (max_power_limit // 1000)
// times the number of GPUs measured, number_of_gpus, gpu_model = GPU 0's name
// (zeus/optimizer/batch_size/client.py).
#include <gtest/gtest.h>

#include <cmath>

#include "support/sim_fixture.hpp"
#include "zeus/bso/client.hpp"

namespace zeus::bso {
namespace {

class BsoGpuConfig : public testing::SimulatedGpus {};

TEST_F(BsoGpuConfig, IsGpuZerosMaximumLimitInWholeWattsTimesTheGpusMeasured) {
    // A fractional maximum: the original floors it (// 1000 on mW).
    constexpr double kMaxW = 287.6;
    configure(R"({"gpus": [{"model": "A40", "count": 3, "power": {"limit_min_w": 100, "limit_max_w": )" +
              std::to_string(kMaxW) + R"(, "limit_default_w": 250}}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    ASSERT_EQ(gpus.size(), 3u);
    const auto constraints = gpus[0].power_limit_constraints();
    ASSERT_TRUE(constraints);
    ASSERT_EQ(constraints->max.count(), static_cast<long long>(std::llround(kMaxW * 1000)));

    for (const auto& measured : std::vector<std::vector<unsigned>> {std::vector<unsigned>{0}, {0, 2}, {0, 1, 2}}) {
        const auto config = gpu_config(gpus, measured);
        ASSERT_TRUE(config) << config.error().describe();
        EXPECT_EQ(config->max_power, std::floor(kMaxW) * static_cast<double>(measured.size()));
        EXPECT_EQ(config->number_of_gpus, static_cast<std::int64_t>(measured.size()));
        EXPECT_NE(config->gpu_model.find("A40"), std::string::npos) << config->gpu_model;
        EXPECT_EQ(config->gpu_model, gpus[0].identity().name);
    }
}

TEST_F(BsoGpuConfig, FollowsCudaVisibleDevicesForGpuZero) {
    // Two models: GPU 0 after CUDA_VISIBLE_DEVICES=1 is the V100 (250 W).
    configure(R"({"gpus": [{"model": "A40", "count": 1}, {"model": "V100-PCIE-32GB", "count": 1}]})");
    Gpus gpus = Gpus::open(simulated("1"));
    ASSERT_TRUE(gpus.status().ok()) << gpus.status().error().describe();
    ASSERT_EQ(gpus.size(), 1u);
    const auto max_w = static_cast<double>(gpus[0].power_limit_constraints()->max.count() / 1000);
    const auto config = gpu_config(gpus, {0});
    ASSERT_TRUE(config) << config.error().describe();
    EXPECT_NE(config->gpu_model.find("V100"), std::string::npos) << config->gpu_model;
    EXPECT_EQ(config->max_power, max_w);
    EXPECT_EQ(config->max_power, 250.0);  // the V100 preset's maximum (docs/simulator.md)
}

TEST_F(BsoGpuConfig, NoGpusIsTheOriginalsError) {
    configure(R"({"gpus": [{"model": "A40", "count": 1}]})");
    Gpus gpus = Gpus::open(simulated());
    ASSERT_TRUE(gpus.status().ok());
    const auto none_measured = gpu_config(gpus, {});
    ASSERT_FALSE(none_measured);
    EXPECT_EQ(none_measured.error().message, "No GPUs detected.");
    const auto empty = gpu_config(Gpus{}, {0});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace zeus::bso
