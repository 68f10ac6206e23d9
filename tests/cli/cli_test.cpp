// The `zeus` program run as a user runs it, against the simulator.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <zeus_sim/zeus_sim.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "support/build_paths.hpp"
#include "support/command_output.hpp"

namespace {

struct CommandResult {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

CommandResult run(const std::string& command) {
    CommandResult r;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return r;
    std::array<char, 4096> buffer{};
    while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) r.output += buffer.data();
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

class ZeusCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("zeus-cli-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        env_ = "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY ZEUS_SIM_STATE=" +
               (dir_ / "state").string() + " ";
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::string config(const std::string& json) {
        const auto path = dir_ / "sim.json";
        std::ofstream(path) << json;
        return "ZEUS_SIM_CONFIG=" + path.string() + " ";
    }
    std::filesystem::path dir_;
    std::string env_;
};

TEST_F(ZeusCli, ShowEnvJsonDescribesSimulatedGpus) {
    const CommandResult r = run(env_ + zeus::testing::zeus_cli_path() + " show-env --simulate --format json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto report = nlohmann::json::parse(r.output);
    EXPECT_TRUE(report["gpu_backend"]["simulated"].get<bool>());
    ASSERT_EQ(report["gpus"].size(), 2U);
    const auto& gpu = report["gpus"][0];
    EXPECT_TRUE(gpu["energy_counter"]["supported"].get<bool>());
    EXPECT_EQ(gpu["power"]["device_instant"]["scope"], "gpu");
    EXPECT_LT(gpu["power_limit"]["min_w"].get<double>(), gpu["power_limit"]["max_w"].get<double>());
    // Without --check-control nothing is written: the answer comes from the
    // process's capabilities (the tests run as root in CI, but need not).
    EXPECT_EQ(gpu["power_limit"]["settable_basis"], "capabilities");
    EXPECT_FALSE(report["gpu_backend"]["driver_version"].get<std::string>().empty());
}

TEST_F(ZeusCli, ShowEnvHumanExplainsWhatIsMissingAndWhy) {
    const CommandResult r =
        run(env_ + config(R"({"gpus": [{"model": "P100-PCIE-16GB", "permissions": {"set_power_limit": false}},
                                         {"model": "A100-SXM4-40GB", "faults": {"init_error": "GPU_IS_LOST"}}]})") +
            zeus::testing::zeus_cli_path() + " show-env --simulate --check-control");
    ASSERT_EQ(r.exit_code, 0) << r.output;  // the P100 can still be measured through power
    EXPECT_NE(r.output.find("SIMULATED"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("energy counter:    no: Pascal GPUs have no energy counter"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("not permitted"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("CAP_SYS_ADMIN"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("GPU 1 -> GPU 1: UNAVAILABLE"), std::string::npos) << r.output;
}

TEST_F(ZeusCli, CheckControlProbesThePowerLimitWithoutChangingIt) {
    const CommandResult r =
        run(env_ + zeus::testing::zeus_cli_path() + " show-env --simulate --check-control --format json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto gpu = nlohmann::json::parse(r.output)["gpus"][0];
    EXPECT_EQ(gpu["power_limit"]["settable_basis"], "probe");
    EXPECT_TRUE(gpu["power_limit"]["settable"].get<bool>());
    EXPECT_EQ(gpu["power_limit"]["current_w"], gpu["power_limit"]["default_w"]);
}

TEST_F(ZeusCli, UnknownSubcommandIsNamed) {
    const CommandResult r = run(env_ + zeus::testing::zeus_cli_path() + " bogus");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("bogus"), std::string::npos) << r.output;
    const CommandResult none = run(env_ + zeus::testing::zeus_cli_path());
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.output.find("show-env"), std::string::npos) << none.output;
}

TEST_F(ZeusCli, ShowEnvFailsWhenNothingIsMeasurable) {
    const CommandResult r =
        run(env_ + "ZEUS_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 " + zeus::testing::zeus_cli_path() + " show-env");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("ZEUS_NVML_LIBRARY"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--simulate"), std::string::npos) << r.output;
}

// A broken simulator configuration: the JSON report (standard output only)
// carries the simulator's own reason, not just NVML's "Unknown Error".
TEST_F(ZeusCli, ShowEnvJsonCarriesTheSimulatorsReasonForABrokenConfig) {
    const auto r =
        zeus::testing::capture_separately(env_ + config(R"({"gpus": [{"model": "B300"}]})") +
                                          zeus::testing::zeus_cli_path() + " show-env --simulate --format json");
    const auto report = nlohmann::json::parse(r.out);
    const std::string text = report.dump();
    EXPECT_NE(text.find("B300"), std::string::npos) << text;
    EXPECT_NE(text.find("ZEUS_SIM_CONFIG"), std::string::npos) << text;
}

TEST_F(ZeusCli, MalformedEnvironmentIsAUsageError) {
    CommandResult r = run(env_ + "ZEUS_SIMULATE=perhaps " + zeus::testing::zeus_cli_path() + " show-env");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("ZEUS_SIMULATE=\"perhaps\""), std::string::npos) << r.output;
    r = run(env_ + "CUDA_VISIBLE_DEVICES=0,,1 " + zeus::testing::zeus_cli_path() + " show-env --simulate");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("entry 2 is empty"), std::string::npos) << r.output;
    // An empty library path means "unset", never "the program itself".
    r = run(env_ + "ZEUS_NVML_LIBRARY= " + zeus::testing::zeus_cli_path() + " show-env --format json");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)["gpu_backend"]["library"], "libnvidia-ml.so.1") << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " show-env --format xml");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("xml"), std::string::npos) << r.output;
}

TEST_F(ZeusCli, DemoMeasuresEachSimulatedGpuCloseToGroundTruth) {
    // No GPU and no --simulate: the demo must say it falls back to the simulator.
    const CommandResult r = run(env_ + "ZEUS_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 " +
                                zeus::testing::zeus_cli_path() + " demo --seconds 1.5");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Running the demo on the Zeus GPU simulator"), std::string::npos) << r.output;
    // One row per GPU: index, name, time, energy, power, source, truth, error%.
    int rows = 0;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        const auto name_at = line.find("NVIDIA A100-SXM4-40GB");
        if (name_at == std::string::npos || line.find("energy counter") == std::string::npos) continue;
        ++rows;
        std::istringstream numbers(line.substr(name_at + std::string("NVIDIA A100-SXM4-40GB").size()));
        double seconds = 0, measured = 0, avg_power = 0, truth = 0;
        std::string energy_word, counter_word;
        numbers >> seconds >> measured >> avg_power >> energy_word >> counter_word >> truth;
        ASSERT_FALSE(numbers.fail()) << line;
        EXPECT_GT(seconds, 1.4) << line;
        EXPECT_GT(truth, 0.0) << line;
        // The demo reads each counter right after it refreshes, so each end of
        // the window is off only by the poll delay (allow 25 ms), not by a
        // whole 100 ms refresh period.
        EXPECT_NEAR(measured, truth, 2 * 0.025 * avg_power + 0.01) << line;
    }
    EXPECT_EQ(rows, 2) << r.output;
}

}  // namespace
