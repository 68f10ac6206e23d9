#include <gtest/gtest.h>

#include "config.h"
#include "device/nvml/nvml_abi.h"
#include "test_support.h"

namespace zeus::sim {
namespace {

using testing::ScopedEnv;
using testing::TempDir;

std::string config_error(const std::string& text) {
  try {
    parse_config(text, "test.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SimConfig, DefaultIsTwoA100sWithRealisticIdentity) {
  const SimConfig config = parse_config(default_config_json(), "<default>");
  ASSERT_EQ(config.gpus.size(), 2u);
  EXPECT_EQ(config.clock, ClockMode::kReal);
  EXPECT_TRUE(config.driver_loaded);
  for (const GpuParams& p : config.gpus) {
    EXPECT_STREQ(p.name, "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(p.architecture, NVML_DEVICE_ARCH_AMPERE);
    EXPECT_EQ(p.limit_min_w, 100);
    EXPECT_EQ(p.limit_max_w, 400);
    EXPECT_EQ(p.limit_default_w, 400);
    EXPECT_TRUE(testing::has_shape(p.uuid, testing::kUuidShape)) << p.uuid;
    EXPECT_TRUE(testing::has_shape(p.pci_bus_id, testing::kBusIdShape)) << p.pci_bus_id;
    EXPECT_GT(p.initial_energy_mj, 0u) << "NVML counts since driver load, not since our start";
  }
  EXPECT_STRNE(config.gpus[0].uuid, config.gpus[1].uuid);
  EXPECT_STRNE(config.gpus[0].pci_bus_id, config.gpus[1].pci_bus_id);
}

TEST(SimConfig, IdentityIsDeterministicFromSeed) {
  const auto a = parse_config(R"({"seed": 1})", "a");
  const auto b = parse_config(R"({"seed": 1})", "b");
  const auto c = parse_config(R"({"seed": 2})", "c");
  EXPECT_STREQ(a.gpus[0].uuid, b.gpus[0].uuid);
  EXPECT_STRNE(a.gpus[0].uuid, c.gpus[0].uuid);
}

TEST(SimConfig, PresetsCarryTheirSensorFeatures) {
  const auto config = parse_config(R"({"gpus": [{"model": "A100-SXM4-40GB"}, {"model": "H100-SXM5-80GB"},
      {"model": "A40"}, {"model": "V100-SXM2-16GB"}, {"model": "P100-PCIE-16GB"}, {"model": "GH200"}]})", "t");
  ASSERT_EQ(config.gpus.size(), 6u);
  const GpuParams &a100 = config.gpus[0], &h100 = config.gpus[1], &a40 = config.gpus[2], &v100 = config.gpus[3],
                  &p100 = config.gpus[4], &gh200 = config.gpus[5];
  EXPECT_EQ(a100.power_usage_source, PowerUsageSource::kInstant);
  EXPECT_TRUE(a100.power_average_field_supported);
  EXPECT_DOUBLE_EQ(a100.power_window_s, 0.025);
  EXPECT_DOUBLE_EQ(a100.power_period_s, 0.100);
  EXPECT_EQ(h100.power_usage_source, PowerUsageSource::kAverage1s);
  EXPECT_TRUE(h100.memory_scope_supported);
  EXPECT_EQ(h100.architecture, NVML_DEVICE_ARCH_HOPPER);
  EXPECT_EQ(a40.power_usage_source, PowerUsageSource::kAverage1s);
  EXPECT_FALSE(a40.memory_scope_supported);
  EXPECT_TRUE(v100.energy_counter_supported);
  EXPECT_FALSE(v100.power_average_field_supported);
  EXPECT_DOUBLE_EQ(v100.power_window_s, 0.010);
  EXPECT_FALSE(p100.energy_counter_supported);
  EXPECT_EQ(p100.architecture, NVML_DEVICE_ARCH_PASCAL);
  EXPECT_FALSE(gh200.gpu_scope_supported);
  EXPECT_TRUE(gh200.module_scope_supported);
}

TEST(SimConfig, OverridesAndCountApply) {
  const auto config = parse_config(R"({"clock": "virtual", "gpus": [{"model": "NVIDIA A40", "count": 3,
      "power": {"limit_min_w": 150, "limit_default_w": 200},
      "counters": {"energy_period_ms": 50, "power_period_ms": 20, "power_window_ms": 20},
      "clocks": {"supported_graphics_mhz": [900, 1200, 300]},
      "initial_energy_mj": 0,
      "permissions": {"set_power_limit": false}}]})", "t");
  ASSERT_EQ(config.gpus.size(), 3u);
  EXPECT_EQ(config.clock, ClockMode::kVirtual);
  const GpuParams& p = config.gpus[2];
  EXPECT_EQ(p.limit_min_w, 150);
  EXPECT_EQ(p.limit_default_w, 200);
  EXPECT_DOUBLE_EQ(p.energy_period_s, 0.05);
  EXPECT_DOUBLE_EQ(p.power_period_s, 0.02);
  EXPECT_EQ(p.graphics_clock_count, 3u);
  EXPECT_EQ(p.graphics_clocks_mhz[0], 1200u);
  EXPECT_EQ(p.graphics_max_mhz, 1200);
  EXPECT_EQ(p.graphics_min_mhz, 300);
  EXPECT_EQ(p.initial_energy_mj, 0u);
  EXPECT_FALSE(p.can_set_power_limit);
  EXPECT_TRUE(p.can_set_clocks);
}

TEST(SimConfig, DriverLatencyDefaultsFollowTheGeneration) {
  const auto config = parse_config(R"({"gpus": [{"model": "H100-SXM5-80GB"}, {"model": "P100-PCIE-16GB"}]})", "t");
  const DriverLatency& h100 = config.gpus[0].driver_latency;
  const DriverLatency& p100 = config.gpus[1].driver_latency;
  for (std::size_t i = 0; i < kDriverCallCount; ++i) {
    const auto call = static_cast<DriverCall>(i);
    EXPECT_EQ(h100.of(call), default_driver_latency(NVML_DEVICE_ARCH_HOPPER).of(call)) << driver_call_key(call);
    EXPECT_GT(h100.of(call), 0) << "a real driver is never free: " << driver_call_key(call);
    EXPECT_GT(p100.of(call), h100.of(call)) << "pre-Volta driver paths are the slower ones";
  }
}

TEST(SimConfig, DriverLatencyNamedCallsOverrideTheDefaultInAnyOrder) {
  const auto config = parse_config(R"({"gpus": [{"model": "A100-SXM4-40GB", "driver_latency_us":
      {"nvmlDeviceGetTotalEnergyConsumption": 250, "default": 7, "setters": 1500}}]})",
                                   "t");
  const DriverLatency& latency = config.gpus[0].driver_latency;
  EXPECT_EQ(latency.of(DriverCall::kTotalEnergy), 250);
  EXPECT_EQ(latency.of(DriverCall::kSetter), 1500);
  EXPECT_EQ(latency.of(DriverCall::kFieldValues), 7);
  EXPECT_EQ(latency.of(DriverCall::kQuery), 7);
}

TEST(SimConfig, DriverLatencyRefusesUnknownCallsAndBadValues) {
  const std::string typo =
      config_error(R"({"gpus": [{"model": "A100-SXM4-40GB", "driver_latency_us": {"nvmlDeviceGetPower": 5}}]})");
  EXPECT_NE(typo.find("gpus[0].driver_latency_us.nvmlDeviceGetPower"), std::string::npos) << typo;
  EXPECT_NE(typo.find("nvmlDeviceGetPowerUsage"), std::string::npos) << "the known keys are listed: " << typo;
  const std::string negative =
      config_error(R"({"gpus": [{"model": "A100-SXM4-40GB", "driver_latency_us": {"default": -1}}]})");
  EXPECT_NE(negative.find("driver_latency_us.default"), std::string::npos) << negative;
}

TEST(SimConfig, SixtyFourGpusFitAndOneMoreIsRefusedWithTheLimit) {
  EXPECT_EQ(parse_config(R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 64}]})", "t").gpus.size(), 64u);
  const std::string error = config_error(R"({"gpus": [{"model": "H100-SXM5-80GB", "count": 64}, {"model": "A40"}]})");
  EXPECT_NE(error.find("limit of 64 GPUs"), std::string::npos) << error;
}

TEST(SimConfig, UnknownKeysAreNamedWithTheirPath) {
  const std::string message = config_error(R"({"gpus": [{"model": "A40", "power": {"idel_w": 3}}]})");
  EXPECT_NE(message.find("test.json"), std::string::npos) << message;
  EXPECT_NE(message.find("gpus[0].power.idel_w"), std::string::npos) << message;
  EXPECT_NE(message.find("idle_w"), std::string::npos) << "lists the known keys: " << message;
  EXPECT_NE(config_error(R"({"sede": 1})").find("sede"), std::string::npos);
}

TEST(SimConfig, BadValuesAreRejectedClearly) {
  EXPECT_NE(config_error(R"({"gpus": [{"model": "A40", "power": {"idle_w": -1}}]})").find("gpus[0].power.idle_w"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"model": "B300"}]})").find("A100-SXM4-40GB"), std::string::npos)
      << "lists the known models";
  EXPECT_NE(config_error(R"({"clock": "fast"})").find("clock"), std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"model": "A40", "faults": {"init_error": "NOPE"}}]})").find("init_error"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"model": "A40", "counters": {"power_window_ms": 200}}]})")
                .find("power_window_ms"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"model": "A40", "power": {"limit_default_w": 500}}]})").find("limit"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"model": "A40", "count": 65}]})").find("count"), std::string::npos);
  EXPECT_NE(config_error("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(config_error(R"({"gpus": [{"count": 2}]})").find("model"), std::string::npos);
}

// A JSON parser would keep one of two equal keys silently; which one the
// user meant is unknowable, so both are refused, at any depth.
TEST(SimConfig, AKeyGivenTwiceIsRefusedWithItsPath) {
  std::string message = config_error(R"({"clock": "virtual", "clock": "real"})");
  EXPECT_NE(message.find("clock is given twice"), std::string::npos) << message;
  message = config_error(R"({"gpus": [{"model": "A40", "power": {"idle_w": 50, "idle_w": 60}}]})");
  EXPECT_NE(message.find("gpus[0].power.idle_w is given twice"), std::string::npos) << message;
  // The same key in two objects is no duplicate.
  EXPECT_EQ(config_error(R"({"gpus": [{"model": "A40"}, {"model": "A100-SXM4-40GB"}]})"), "");
}

TEST(SimConfig, NumberOverflowNamesTheFileAndKey) {
  const std::string message =
      config_error(R"({"gpus": [{"model": "A40"}, {"model": "A40", "power": {"idle_w": 1e400}}]})");
  EXPECT_NE(message.find("test.json"), std::string::npos) << message;
  EXPECT_NE(message.find("gpus[1].power.idle_w"), std::string::npos) << message;
  EXPECT_NE(config_error(R"({"seed": -1e999})").find("seed"), std::string::npos);
}

TEST(SimConfig, OverlongNameIsRejectedWithTheLimit) {
  const std::string name(96, 'x');
  const std::string message = config_error(R"({"gpus": [{"model": "A40", "name": ")" + name + R"("}]})");
  EXPECT_NE(message.find("gpus[0].name"), std::string::npos) << message;
  EXPECT_NE(message.find("at most 95"), std::string::npos) << message;
  const auto config = parse_config(R"({"gpus": [{"model": "A40", "name": ")" + name.substr(1) + R"("}]})", "t");
  EXPECT_EQ(std::string(config.gpus[0].name), name.substr(1)) << "95 characters fit";
}

TEST(SimConfig, InitErrorAcceptsNvmlNames) {
  const auto config = parse_config(
      R"({"gpus": [{"model": "A40", "faults": {"init_error": "GPU_IS_LOST"}}, {"model": "A40", "faults": {"init_error": "NVML_ERROR_UNKNOWN"}}]})",
      "t");
  EXPECT_EQ(config.gpus[0].fault_init_error, NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(config.gpus[1].fault_init_error, NVML_ERROR_UNKNOWN);
}

TEST(SimConfig, HashFollowsContentNotFormatting) {
  EXPECT_EQ(parse_config(R"({"seed": 1, "clock": "virtual"})", "a").hash,
            parse_config("{\"clock\":\"virtual\",\n \"seed\":1}", "b").hash);
  EXPECT_NE(parse_config(R"({"seed": 1})", "a").hash, parse_config(R"({"seed": 2})", "a").hash);
}

TEST(SimConfig, EnvironmentNamesTheFile) {
  TempDir dir;
  {
    ScopedEnv env(kConfigEnv, dir.file("missing.json"));
    try {
      load_config_from_environment();
      FAIL() << "a missing file must be an error";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    }
  }
  ScopedEnv env(kConfigEnv, dir.write("c.json", R"({"gpus": [{"model": "V100-SXM2-16GB", "count": 4}]})"));
  EXPECT_EQ(load_config_from_environment().gpus.size(), 4u);
}

TEST(SimConfig, EnvironmentNamingADirectoryIsReportedAsSuch) {
  TempDir dir;
  ScopedEnv env(kConfigEnv, dir.file(""));
  try {
    load_config_from_environment();
    FAIL() << "a directory must be an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(SimConfig, EmptyEnvironmentValueMeansTheDefault) {
  ScopedEnv env(kConfigEnv, "");
  EXPECT_EQ(load_config_from_environment().source, "<default>");
}

}  // namespace
}  // namespace zeus::sim
