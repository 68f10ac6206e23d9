// A machine without RAPL (most cloud VMs, many containers) or without a GPU
// library: with its default API groups zeusd serves what exists, says once
// what is missing and how to fix it, and refuses to start only when the
// user named the missing device's group in --enable.
#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

class MissingDevicesTest : public ZeusdTest {
  protected:
    std::map<std::string, std::string> env_without_rapl() {
        const auto empty = dir_ / "no-powercap";
        std::filesystem::create_directories(empty);
        auto env = daemon_env();
        env["ZEUS_POWERCAP_ROOT"] = empty.string();
        return env;
    }
    std::map<std::string, std::string> env_without_gpu_library() {
        auto env = daemon_env();
        env["ZEUS_SIM_LIBRARY"] = (dir_ / "no-such-libnvidia-ml.so.1").string();
        return env;
    }
    void start_with(const std::map<std::string, std::string>& env) {
        daemon_ = std::make_unique<ZeusdProcess>(std::vector<std::string>{"--socket-path", *endpoint_.unix_path}, env,
                                                 dir_ / "zeusd.log", endpoint_);
    }
    static std::size_t count_of(const std::string& text, const std::string& part) {
        std::size_t count = 0;
        for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
        return count;
    }
};

TEST_F(MissingDevicesTest, DefaultGroupsStartWithoutRaplAndListNoCpus) {
    start_with(env_without_rapl());
    const auto discover = get("/discover");
    ASSERT_EQ(discover.status, 200) << log();
    const auto body = json_of(discover);
    EXPECT_EQ(body["cpus"], json::array());
    EXPECT_EQ(body["gpus"].size(), local_gpus().size());
    EXPECT_EQ(body["enabled_api_groups"], json::parse(R"(["gpu-control","gpu-read","cpu-read"])"));
    // As the original: CPU routes answer, and find no CPU.
    const auto all = get("/cpu/get_cumulative_energy?cpu=true&dram=true");
    EXPECT_EQ(all.status, 200) << all.body;
    EXPECT_EQ(json_of(all), json::object());
    EXPECT_EQ(get("/cpu/get_power?cpu_ids=0").status, 400);
    EXPECT_EQ(get("/gpu/get_power").status, 200);
    EXPECT_EQ(count_of(log(), "serving without CPUs"), 1U) << log();
    EXPECT_NE(log().find("--enable gpu-control,gpu-read"), std::string::npos) << log();
}

TEST_F(MissingDevicesTest, NamingCpuReadWithoutRaplIsRefused) {
    const auto [status, output] =
        run_zeusd({"serve", "--socket-path", *endpoint_.unix_path, "--enable", "gpu-read,cpu-read"}, env_without_rapl());
    EXPECT_EQ(status, 1) << output;
    EXPECT_NE(output.find("no RAPL"), std::string::npos) << output;
}

TEST_F(MissingDevicesTest, DefaultGroupsStartWithoutAGpuLibraryAndServeCpus) {
    start_with(env_without_gpu_library());
    const auto body = json_of(get("/discover"));
    EXPECT_EQ(body["gpus"], json::array()) << log();
    EXPECT_EQ(body["cpus"].size(), 1U);
    EXPECT_EQ(body["enabled_api_groups"], json::parse(R"(["cpu-read"])"));
    EXPECT_EQ(get("/cpu/get_cumulative_energy?cpu=true&dram=false").status, 200);
    EXPECT_EQ(get("/gpu/get_power").status, 404);
    EXPECT_EQ(count_of(log(), "serving without GPUs"), 1U) << log();
}

TEST_F(MissingDevicesTest, NamingAGpuGroupWithoutAGpuLibraryIsRefused) {
    const auto [status, output] = run_zeusd({"serve", "--socket-path", *endpoint_.unix_path, "--enable", "gpu-read"},
                                            env_without_gpu_library());
    EXPECT_EQ(status, 1) << output;
    EXPECT_NE(output.find("no GPU backend"), std::string::npos) << output;
}

}  // namespace
}  // namespace zeus::testing
