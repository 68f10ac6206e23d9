// `zeus show-env` over every kind of device at once: a fake powercap tree
// (RAPL packages and DRAM zones), a fake AMD SMI library and a fake Jetson
// sysfs tree, each with one thing wrong that the report must explain.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <dlfcn.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "support/command_output.hpp"
#include <string>

#include "device/cpu/fake_powercap.hpp"
#include "device/soc/fake_jetson.hpp"
#include "support/build_paths.hpp"

namespace {

using zeus::testing::capture;

class ShowEnvDevices : public ::testing::Test {
  protected:
    void SetUp() override {
        // Two packages; package 0 has DRAM, package 1 has none, and a psys
        // zone that is not a CPU package.
        powercap_.add_zone(0, "package-0", 1'000'000, 262'143'328'850);
        powercap_.add_subzone(0, 0, 500'000, 65'532'610'987);
        powercap_.add_zone(1, "package-1", 2'000'000, 262'143'328'850);
        powercap_.add_zone(2, "psys", 3'000'000, 262'143'328'850);
        // A Jetson with a CPU rail, a GPU rail and the board input.
        const auto hwmon = jetson_.hwmon("1-0040");
        zeus::test::FakeJetson::hwmon_rail(hwmon, 1, "VDD_IN", 5000, 1200);
        zeus::test::FakeJetson::hwmon_rail(hwmon, 2, "VDD_CPU_CV", 5000, 300);
        zeus::test::FakeJetson::hwmon_rail(hwmon, 3, "VDD_GPU_SOC", 5000, 400);
        env_ =
            "env -u CUDA_VISIBLE_DEVICES -u HIP_VISIBLE_DEVICES -u ZEUS_SIMULATE "
            "ZEUS_NVML_LIBRARY= ZEUS_POWERCAP_ROOT=" +
            powercap_.root().string() + " ZEUS_JETSON_SYSFS_ROOT=" + jetson_.sys().string() +
            " ZEUS_AMDSMI_LIBRARY=" + zeus::testing::fake_amdsmi_library_path() +
            " FAKE_AMDSMI_GPUS=2 FAKE_AMDSMI_POWER_W=300 ";
    }
    zeus::testing::FakePowercap powercap_;
    zeus::test::FakeJetson jetson_;
    std::string env_;
};

TEST_F(ShowEnvDevices, JsonListsCpusAmdGpusAndJetsonRails) {
    int rc = -1;
    // The AMD GPU 1 has a stuck energy counter: validation must reject it.
    const std::string out = capture(
        env_ + "FAKE_AMDSMI_COUNTER=correct,stuck " + zeus::testing::zeus_cli_path() + " show-env --format json", rc);
    ASSERT_EQ(rc, 0) << out;
    const auto r = nlohmann::json::parse(out);

    EXPECT_EQ(r["gpu_backend"]["name"], "amdsmi");
    ASSERT_EQ(r["gpus"].size(), 2U);
    EXPECT_TRUE(r["gpus"][0]["energy_counter"]["supported"].get<bool>());
    EXPECT_FALSE(r["gpus"][1]["energy_counter"]["supported"].get<bool>());
    EXPECT_NE(r["gpus"][1]["energy_counter"]["reason"].get<std::string>().find("ratio"), std::string::npos);

    const auto& cpus = r["cpus"]["packages"];
    ASSERT_EQ(cpus.size(), 2U) << r["cpus"].dump();  // psys is not a package
    EXPECT_EQ(cpus[0]["name"], "package-0");
    EXPECT_TRUE(cpus[0]["dram"]["available"].get<bool>());
    EXPECT_FALSE(cpus[1]["dram"]["available"].get<bool>());
    EXPECT_FALSE(r["cpus"]["warnings"].empty());  // says psys was skipped

    EXPECT_TRUE(r["soc"]["available"].get<bool>()) << r["soc"].dump();
    ASSERT_EQ(r["soc"]["rails"].size(), 3U);
    // VDD_IN: 5 V x 1.2 A = 6 W, as the fake tree says.
    for (const auto& rail : r["soc"]["rails"]) {
        if (rail["name"] == "VDD_IN") {
            EXPECT_DOUBLE_EQ(rail["power_w"].get<double>(), 6.0);
        }
    }
}

TEST_F(ShowEnvDevices, HumanOutputExplainsUnreadableRapl) {
    // energy_uj replaced by a directory: unreadable even for root.
    std::filesystem::remove(powercap_.root() / "intel-rapl:1" / "energy_uj");
    std::filesystem::create_directory(powercap_.root() / "intel-rapl:1" / "energy_uj");
    int rc = -1;
    const std::string out = capture(env_ + zeus::testing::zeus_cli_path() + " show-env", rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("## CPUs (RAPL)"), std::string::npos) << out;
    EXPECT_NE(out.find("CPU 0 (intel-rapl:0, package-0): package energy available"), std::string::npos) << out;
    EXPECT_NE(out.find("CPU 1 (intel-rapl:1, package-1): UNAVAILABLE"), std::string::npos) << out;
    EXPECT_NE(out.find("energy_uj"), std::string::npos) << out;
    EXPECT_NE(out.find("## SoC"), std::string::npos) << out;
    EXPECT_NE(out.find("rail VDD_GPU_SOC (gpu)"), std::string::npos) << out;
    EXPECT_NE(out.find("Backend: amdsmi"), std::string::npos) << out;
}

TEST_F(ShowEnvDevices, NoAmdLibraryIsMentionedWhenNothingIsFound) {
    // AMD is tried only when the default NVML is missing, not a named one.
    if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL)) {
        dlclose(nvml);
        GTEST_SKIP() << "this machine has a real NVML";
    }
    int rc = -1;
    const std::string out = capture(
        "env -u CUDA_VISIBLE_DEVICES -u ZEUS_AMDSMI_LIBRARY -u ZEUS_NVML_LIBRARY "
        "AMDSMI_LIB_DIR=/nonexistent ROCM_PATH=/nonexistent ZEUS_POWERCAP_ROOT=/nonexistent " +
            zeus::testing::zeus_cli_path() + " show-env",
        rc);
    EXPECT_EQ(rc, 1) << out;
    EXPECT_NE(out.find("AMD GPUs:"), std::string::npos) << out;
}

}  // namespace
