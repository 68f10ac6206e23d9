// `zeus power`, `zeus energy` and `zeus run` end to end against the GPU
// simulator, compared with the simulator's ground-truth energy. Their pure
// parts are unit-tested beside this file (measure_options_test.cpp,
// child_process_test.cpp); the report formats are the library's
// (tests/report/).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "device/cpu/fake_powercap.hpp"
#include "measure_options.hpp"
#include "support/build_paths.hpp"

extern char** environ;

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Finished {
    int exit_code = -1;  // 128 + signal when killed
    std::string output;  // stdout and stderr together
    double seconds = 0;
};

Finished run(const std::string& command) {
    Finished r;
    const auto start = Clock::now();
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return r;
    std::array<char, 4096> buffer{};
    while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) r.output += buffer.data();
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class MeasureCommands : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-measure-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        // A machine with one readable RAPL package whose counter does not move.
        powercap_.add_zone(0, "package-0", 1'000'000, 262'143'328'850);
        env_ = "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY -u ZEUS_JETSON_SYSFS_ROOT "
               "ZEUS_SIM_STATE=" + (dir_ / "state").string() + " ZEUS_POWERCAP_ROOT=" + powercap_.root().string() + " ";
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // Ground-truth energy per simulated GPU, from `zeus-sim status`.
    std::vector<double> truth() const {
        const auto r = run(env_ + zeus::testing::zeus_sim_cli_path() + " status --format json");
        std::vector<double> joules;
        const auto status = nlohmann::json::parse(r.output, nullptr, false);
        if (status.is_discarded()) return joules;
        for (const auto& g : status["gpus"]) joules.push_back(g["ground_truth_energy_j"].get<double>());
        return joules;
    }
    // Starts `zeus ARGS` without a shell (so a signal reaches zeus itself),
    // its stdout and stderr going to files.
    pid_t start_zeus(const std::vector<std::string>& args) const {
        // Everything is prepared before fork: the child only calls async-signal-safe functions.
        std::vector<std::string> env_strings = {"ZEUS_SIM_STATE=" + (dir_ / "state").string(),
                                                "ZEUS_POWERCAP_ROOT=" + powercap_.root().string()};
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string entry(*e);
            const std::string name = entry.substr(0, entry.find('='));
            if (name == "ZEUS_SIM_STATE" || name == "ZEUS_POWERCAP_ROOT" || name == "ZEUS_SIMULATE" ||
                name == "CUDA_VISIBLE_DEVICES" || name == "ZEUS_NVML_LIBRARY" || name == "ZEUS_JETSON_SYSFS_ROOT") {
                continue;
            }
            env_strings.push_back(entry);
        }
        std::vector<char*> envp;
        for (auto& e : env_strings) envp.push_back(e.data());
        envp.push_back(nullptr);
        std::vector<char*> argv{const_cast<char*>(zeus::testing::zeus_cli_path().c_str())};  // NOLINT: execve's API
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT
        argv.push_back(nullptr);
        const std::string out_path = (dir_ / "stdout").string();
        const std::string err_path = (dir_ / "stderr").string();
        const pid_t pid = ::fork();
        if (pid != 0) return pid;
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err, STDERR_FILENO);
        ::execve(zeus::testing::zeus_cli_path().c_str(), argv.data(), envp.data());
        ::_exit(99);
    }
    // Waits until zeus has started its command (it is zeus's child), up to 10 s.
    static bool wait_for_child_of(pid_t pid) {
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        const std::string children = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
        while (Clock::now() < deadline) {
            if (!read_file(children).empty()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }
    static Finished wait_zeus(pid_t pid, const fs::path& dir) {
        Finished r;
        int raw = 0;
        const auto start = Clock::now();
        ::waitpid(pid, &raw, 0);
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        r.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        r.output = read_file(dir / "stdout") + read_file(dir / "stderr");
        return r;
    }

    zeus::testing::FakePowercap powercap_;
    fs::path dir_;
    std::string env_;
};

const nlohmann::json* device(const nlohmann::json& report, const std::string& name) {
    for (const auto& d : report["devices"]) {
        if (d["device"] == name) return &d;
    }
    return nullptr;
}

TEST_F(MeasureCommands, RunMeasuresABurnCloseToGroundTruth) {
    const auto before = truth();
    ASSERT_EQ(before.size(), 2U);
    const auto report_path = dir_ / "report.json";
    const auto r =
        run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --format json --output " + report_path.string() +
            " -- " + zeus::testing::zeus_sim_cli_path() + " burn --gpu 0 --seconds 1 --util 0.9");
    const auto after = truth();
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // The burn's own ground truth covers less than zeus's window, the
    // status calls around zeus more: the measurement lies in between, give or
    // take one counter refresh period (100 ms) at each edge of the window.
    double burn_truth = -1;
    ASSERT_EQ(std::sscanf(r.output.substr(r.output.find("gpu 0: ")).c_str(), "gpu 0: %lf J", &burn_truth), 1)
        << r.output;
    const auto report = nlohmann::json::parse(read_file(report_path));
    EXPECT_EQ(report["command"], "run");
    EXPECT_EQ(report["exit_code"], 0);
    EXPECT_FALSE(report["interrupted"].get<bool>());
    EXPECT_GE(report["time_s"].get<double>(), 1.0);
    const auto* gpu0 = device(report, "GPU 0");
    const auto* gpu1 = device(report, "GPU 1");
    const auto* cpu0 = device(report, "CPU 0");
    ASSERT_TRUE(gpu0 && gpu1 && cpu0) << report.dump(1);
    EXPECT_EQ((*gpu0)["source"], "energy_counter");
    const double measured = (*gpu0)["energy_j"].get<double>();
    const double power = (*gpu0)["average_power_w"].get<double>();
    const double edge = 2 * 0.1 * std::max(power, 1.0);
    EXPECT_GT(measured, burn_truth - edge) << report.dump(1);
    EXPECT_LT(measured, after[0] - before[0] + edge) << report.dump(1);
    EXPECT_GT(power, (*gpu1)["average_power_w"].get<double>());  // the burning GPU draws more than the idle one
    const double idle = (*gpu1)["energy_j"].get<double>();
    EXPECT_LT(idle, after[1] - before[1] + 2 * 0.1 * (*gpu1)["average_power_w"].get<double>() + 0.5);
    EXPECT_GT(idle, 0.0);
    EXPECT_DOUBLE_EQ((*cpu0)["energy_j"].get<double>(), 0.0);  // the fake counter stands still
}

// Without ZEUS_SIM_STATE each process had a simulator of its own, so the
// burn loaded a GPU that zeus did not measure: zeus must share its GPUs with
// the command, and every format must say the GPUs are simulated.
TEST_F(MeasureCommands, RunSharesItsSimulatedGpusWithTheCommand) {
    const std::string env = "env -u ZEUS_SIMULATE -u ZEUS_SIM_STATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY "
                            "-u ZEUS_JETSON_SYSFS_ROOT ZEUS_POWERCAP_ROOT=" + powercap_.root().string() + " ";
    const auto report_path = dir_ / "report.json";
    auto r =
        run(env + zeus::testing::zeus_cli_path() + " run --simulate --format json --output " + report_path.string() +
            " -- " + zeus::testing::zeus_sim_cli_path() + " burn --gpu 0 --seconds 0.5 --util 0.9");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    double burn_truth = -1;
    ASSERT_EQ(std::sscanf(r.output.substr(r.output.find("gpu 0: ")).c_str(), "gpu 0: %lf J", &burn_truth), 1)
        << r.output;
    const auto report = nlohmann::json::parse(read_file(report_path));
    EXPECT_TRUE(report["simulated"].get<bool>());
    const auto* gpu0 = device(report, "GPU 0");
    ASSERT_TRUE(gpu0) << report.dump(1);
    // At least the burn's own ground truth, give or take one counter period at each edge.
    const double edge = 2 * 0.1 * (*gpu0)["average_power_w"].get<double>();
    EXPECT_GT((*gpu0)["energy_j"].get<double>(), burn_truth - edge) << report.dump(1);

    r = run(env + zeus::testing::zeus_cli_path() + " run --simulate --gpus 0 --cpus none -- true");
    EXPECT_NE(r.output.find("GPUs:     simulated"), std::string::npos) << r.output;
    r = run(env + zeus::testing::zeus_cli_path() + " run --simulate --gpus 0 --cpus none --format csv -- true");
    EXPECT_NE(r.output.find(",simulated\nGPU 0,gpu,0,"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(",true\n"), std::string::npos) << r.output;
}

// `zeus run --format json` output where GPU 1 was lost: GPU 0 is measured,
// GPU 1 marked (no energy, a warning), the total is GPU 0's.
void expect_only_gpu1_lost(const std::string& output) {
    const auto report = nlohmann::json::parse(output.substr(output.find('{')));
    const auto* gpu0 = device(report, "GPU 0");
    const auto* gpu1 = device(report, "GPU 1");
    ASSERT_TRUE(gpu0 && gpu1) << report.dump(1);
    EXPECT_FALSE((*gpu0)["lost"].get<bool>());
    EXPECT_GT((*gpu0)["energy_j"].get<double>(), 0.0) << report.dump(1);
    EXPECT_TRUE((*gpu1)["lost"].get<bool>());
    EXPECT_EQ((*gpu1)["source"], "lost");  // as CSV and the human table say
    EXPECT_TRUE((*gpu1)["energy_j"].is_null());
    EXPECT_FALSE((*gpu1)["warnings"].empty());
    EXPECT_DOUBLE_EQ(report["total_energy_j"].get<double>(), (*gpu0)["energy_j"].get<double>());
}

// A GPU lost while the command runs: the other devices are still reported,
// the lost one is marked in every format and left out of the total.
TEST_F(MeasureCommands, RunReportsTheOtherGpusWhenOneIsLost) {
    const std::string lose = " -- sh -c '" + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 lost 1 && sleep 0.3'";
    auto r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --cpus none --format json" + lose);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_only_gpu1_lost(r.output);

    ASSERT_EQ(run(env_ + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 lost 0").exit_code, 0);
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --cpus none --format csv" + lose);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\nGPU 1,gpu,1,"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(",,,lost,"), std::string::npos) << r.output;

    ASSERT_EQ(run(env_ + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 lost 0").exit_code, 0);
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --cpus none" + lose);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("lost (see warnings"), std::string::npos) << r.output;
}

// `zeus run -- sleep 3` on two identical idle GPUs while another process
// breaks GPU 1's energy counter a second in: stuck, or refusing to be read
// (NOT_SUPPORTED) while its power still answers. Either way GPU 1's energy is
// integrated power, within 2% of its ground truth: its healthy twin's
// measured energy scaled by the two GPUs' ground-truth ratio. The stuck case
// once read +13% (the end edge's wait for a refresh counted too); the
// refusing one was reported lost.
TEST_F(MeasureCommands, RunWithACounterBrokenMidRunMatchesTheGroundTruth) {
    for (const std::string fault : {"stuck_counter", "energy_not_supported"}) {
        const auto before = truth();
        ASSERT_EQ(before.size(), 2U);
        const auto report_path = dir_ / (fault + ".json");
        const auto r =
            run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --cpus none --format json --output " +
                report_path.string() + " -- sh -c 'sleep 1; " + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 " +
                fault + " 1; sleep 2'");
        const auto after = truth();
        ASSERT_EQ(r.exit_code, 0) << r.output;
        ASSERT_EQ(run(env_ + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 clear 0").exit_code, 0);
        const auto report = nlohmann::json::parse(read_file(report_path));
        const auto* twin = device(report, "GPU 0");
        const auto* broken = device(report, "GPU 1");
        ASSERT_TRUE(twin && broken) << report.dump(1);
        EXPECT_EQ((*twin)["source"], "energy_counter") << fault;
        EXPECT_EQ((*broken)["source"], "integrated_power") << fault << report.dump(1);
        EXPECT_FALSE((*broken)["lost"].get<bool>()) << fault;
        const double expected = (*twin)["energy_j"].get<double>() * (after[1] - before[1]) / (after[0] - before[0]);
        EXPECT_NEAR((*broken)["energy_j"].get<double>(), expected, 0.02 * expected) << fault << report.dump(1);
    }
}

// `zeus power` while GPU 1 is lost: its rows say unavailable (an empty CSV
// cell) instead of repeating its last reading, with one warning, not one per row.
TEST_F(MeasureCommands, PowerShowsALostGpuAsUnavailableAndWarnsOnce) {
    const auto r = run("(sleep 0.8; " + env_ + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 lost 1) & " + env_ +
                       zeus::testing::zeus_cli_path() +
                       " power --simulate --cpus none --interval 0.1 --duration 3 --format csv 2>&1; wait");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::size_t warnings = 0;
    for (auto at = r.output.find("GPU 1: no power reading"); at != std::string::npos;
         at = r.output.find("GPU 1: no power reading", at + 1)) {
        ++warnings;
    }
    EXPECT_EQ(warnings, 1U) << r.output;
    // timestamp,elapsed_s,GPU 0,GPU 1: the last rows have GPU 0's power and an empty GPU 1 cell.
    std::vector<std::string> rows;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        if (std::count(line.begin(), line.end(), ',') == 3 && line.find("timestamp") == std::string::npos) {
            rows.push_back(line);
        }
    }
    ASSERT_GE(rows.size(), 20U) << r.output;
    EXPECT_NE(rows.front().back(), ',') << "GPU 1 read before it was lost: " << rows.front();
    for (std::size_t k = rows.size() - 5; k < rows.size(); ++k) {
        EXPECT_EQ(rows[k].back(), ',') << "a lost GPU's stale reading repeated: " << rows[k] << "\n" << r.output;
    }
}

// The same with pre-Volta GPUs (no energy counter: integrated from the power
// timeline), where one lost GPU used to zero every GPU of the window.
TEST_F(MeasureCommands, RunReportsTheOtherPreVoltaGpusWhenOneIsLost) {
    const auto config = dir_ / "p100.json";
    std::ofstream(config) << R"({"gpus": [{"model": "P100-PCIE-16GB", "count": 2}]})";
    const std::string env = env_ + "ZEUS_SIM_CONFIG=" + config.string() + " ";
    const std::string lose = " -- sh -c '" + zeus::testing::zeus_sim_cli_path() + " fault --gpu 1 lost 1 && sleep 0.5'";
    const auto r = run(env + zeus::testing::zeus_cli_path() + " run --simulate --cpus none --format json" + lose);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_only_gpu1_lost(r.output);
}

TEST_F(MeasureCommands, RunPropagatesTheCommandsExitCodeAndSignal) {
    auto r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --gpus 0 -- sh -c 'exit 3'");
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("Status:   exited with code 3"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("GPU 0"), std::string::npos) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() +
            " run --simulate --gpus 0 --cpus none --format json -- sh -c 'kill -TERM $$'");
    EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    EXPECT_EQ(j["signal"], "SIGTERM");
    EXPECT_EQ(j["exit_code"], 143);
    EXPECT_EQ(device(j, "CPU 0"), nullptr);
    // Options after the command's name belong to the command.
    r = run(env_ + zeus::testing::zeus_cli_path() +
            " run --simulate --format csv sh -c 'echo child-says-hi --format' ");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("child-says-hi --format"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("device,kind,index,name"), std::string::npos) << r.output;
}

TEST_F(MeasureCommands, RunOfAMissingCommandFailsLikeAShell) {
    auto r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate -- zeus-no-such-command-xyz --flag");
    EXPECT_EQ(r.exit_code, 127) << r.output;
    EXPECT_NE(r.output.find("zeus-no-such-command-xyz: command not found"), std::string::npos) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate -- " + dir_.string());
    EXPECT_EQ(r.exit_code, 126) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate");
    EXPECT_EQ(r.exit_code, 125) << r.output;
    EXPECT_NE(r.output.find("needs a command"), std::string::npos) << r.output;
    // An empty name is zeus's usage error (125), said as such, not "no command given" with 126.
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate -- ''");
    EXPECT_EQ(r.exit_code, 125) << r.output;
    EXPECT_NE(r.output.find("the command's name is an empty string ('')"), std::string::npos) << r.output;
    // A script whose interpreter is missing names the interpreter, not the script, as missing.
    const auto script = dir_ / "needs-python9.sh";
    {
        std::ofstream out(script);
        out << "#!/usr/bin/zeus-no-such-python9 -u\nprint(1)\n";
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate -- " + script.string());
    EXPECT_EQ(r.exit_code, 127) << r.output;
    EXPECT_NE(r.output.find("bad interpreter: /usr/bin/zeus-no-such-python9 (named on its first line, #!) does "
                            "not exist"),
              std::string::npos)
        << r.output;
}

TEST_F(MeasureCommands, CtrlCDuringRunStopsTheCommandAndPrintsThePartialResult) {
    const pid_t zeus = start_zeus({"run", "--simulate", "--", "sleep", "30"});
    ASSERT_GT(zeus, 0);
    ASSERT_TRUE(wait_for_child_of(zeus)) << read_file(dir_ / "stderr");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(zeus, SIGINT);  // to zeus alone, as `kill -INT`: zeus forwards it
    const auto r = wait_zeus(zeus, dir_);
    EXPECT_EQ(r.exit_code, 130) << r.output;
    EXPECT_LT(r.seconds, 10.0);
    EXPECT_NE(r.output.find("killed by signal 2 (SIGINT); measurement interrupted by SIGINT"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("GPU 0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Time:"), std::string::npos) << r.output;
}

TEST_F(MeasureCommands, UnknownDeviceIndicesAreRejectedWithTheValidRange) {
    auto r = run(env_ + zeus::testing::zeus_cli_path() + " energy --simulate --gpus 0,5 --duration 0");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--gpus: no GPU 5; the valid indices are 0-1"), std::string::npos) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " power --simulate --cpus 3 --duration 0");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--cpus: no CPU 3; the valid indices are 0"), std::string::npos) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " energy --simulate --gpus one --duration 0");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("\"one\" is not a device index"), std::string::npos) << r.output;
    // run keeps the command's codes for the command: its own failures are 125, and the command never starts.
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --gpus 7 -- touch " + (dir_ / "ran").string());
    EXPECT_EQ(r.exit_code, 125) << r.output;
    EXPECT_NE(r.output.find("no GPU 7"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
    r = run(env_ + zeus::testing::zeus_cli_path() + " power --simulate --power-domain memory_average --duration 0");
    EXPECT_EQ(r.exit_code, 2) << r.output;  // A100s report no memory power
    EXPECT_NE(r.output.find("--power-domain memory_average: no selected GPU reports this power"), std::string::npos)
        << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " energy --simulate --gpus none --cpus none --duration 0");
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("nothing to measure"), std::string::npos) << r.output;
    // The simulator is already on: the hint does not send the user back to --simulate.
    EXPECT_EQ(r.output.find("try --simulate"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("zeus show-env --simulate"), std::string::npos) << r.output;
}

TEST_F(MeasureCommands, UnwritableFilesAreNamedBeforeMeasuring) {
    auto r = run(env_ + zeus::testing::zeus_cli_path() +
                 " energy --simulate --duration 0 --log-file /nonexistent-dir/log.csv");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--log-file /nonexistent-dir/log.csv"), std::string::npos) << r.output;
    r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --trace /nonexistent-dir/t.json -- touch " +
            (dir_ / "ran").string());
    EXPECT_EQ(r.exit_code, 125) << r.output;
    EXPECT_NE(r.output.find("--trace /nonexistent-dir/t.json"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
    r = run(env_ + zeus::testing::zeus_cli_path() + " power --simulate --duration 0 --output " + dir_.string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--output"), std::string::npos) << r.output;
}

TEST_F(MeasureCommands, EnergyWindowInEveryFormatAndTheLogFile) {
    const auto log = dir_ / "log.csv";
    auto r = run(env_ + zeus::testing::zeus_cli_path() + " energy --simulate --duration 0.3 --format csv --log-file " +
                 log.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("device,kind,index,name,time_s,energy_j,average_power_w,source,warnings,simulated\nGPU 0,gpu,0,"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("\nGPU 1,gpu,1,"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\nCPU 0,cpu,0,package-0,"), std::string::npos) << r.output;
    EXPECT_NE(read_file(log).find("zeus.energy"), std::string::npos) << read_file(log);

    r = run(env_ + zeus::testing::zeus_cli_path() +
            " energy --simulate --duration 0.2 --gpus 1 --cpus none --format json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    ASSERT_EQ(j["devices"].size(), 1U) << j.dump(1);
    EXPECT_EQ(j["devices"][0]["device"], "GPU 1");
    EXPECT_GE(j["time_s"].get<double>(), 0.2);

    r = run(env_ + zeus::testing::zeus_cli_path() + " energy --simulate --duration 0.2");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Avg power (W)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Total"), std::string::npos) << r.output;
}

// A wall clock past April 2262, where std::chrono::system_clock's int64
// nanoseconds overflow: the window's start (JSON and the window log) and the
// power rows' timestamps say 2300, not 1715.
TEST_F(MeasureCommands, AClockPast2262IsWrittenAsItIs) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "libfaketime is preloaded before the AddressSanitizer runtime, which refuses that";
#endif
    if (!fs::exists("/usr/bin/faketime")) GTEST_SKIP() << "no faketime (Debian package faketime; scripts/setup.sh)";
    using namespace std::chrono;
    const double new_year_2300 = duration<double>(sys_days(year(2300) / January / 1).time_since_epoch()).count();
    const std::string zeus = env_ + "faketime '2300-01-01 00:00:00' " + zeus::testing::zeus_cli_path();
    const auto log = dir_ / "log.csv";
    auto r =
        run(zeus + " energy --simulate --duration 0.1 --gpus 0 --cpus none --format json --log-file " + log.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    EXPECT_TRUE(j["start_time"].get<std::string>().starts_with("2300-01-01T00:0")) << j["start_time"];
    std::istringstream rows(read_file(log));
    std::string header;
    std::string row;
    std::getline(rows, header);
    std::getline(rows, row);
    const double logged = std::stod(row.substr(0, row.find(',')));
    EXPECT_GE(logged, new_year_2300) << row;
    EXPECT_LT(logged, new_year_2300 + 600) << row;
    // Every power row says 2300. (How many rows come is not this test's concern: the simulator's
    // own refresh times, on the system clock, are past its range too.)
    r = run(zeus + " power --simulate --duration 0.5 --interval 0.1 --gpus 0 --cpus none --format csv");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || std::isdigit(static_cast<unsigned char>(line[0])) == 0) continue;
        EXPECT_TRUE(line.starts_with("2300-01-01T00:0")) << r.output;
    }
}

TEST_F(MeasureCommands, PowerPrintsEachPeriodAndTotalsAtCtrlC) {
    const auto trace_path = dir_ / "power.json";
    const pid_t zeus = start_zeus({"power", "--simulate", "--interval", "0.1", "--format", "json", "--trace",
                                   trace_path.string()});
    ASSERT_GT(zeus, 0);
    // Wait for a few readings, then Ctrl-C.
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
        const auto text = read_file(dir_ / "stdout");
        if (std::count(text.begin(), text.end(), '\n') >= 4) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(zeus, SIGINT);
    const auto r = wait_zeus(zeus, dir_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::istringstream lines(read_file(dir_ / "stdout"));
    int readings = 0;
    nlohmann::json summary;
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j["type"] == "power") {
            ++readings;
            EXPECT_GT(j["power_w"]["GPU 0"].get<double>(), 0.0) << line;
            EXPECT_GT(j["power_w"]["GPU 1"].get<double>(), 0.0) << line;
            EXPECT_TRUE(j["power_w"].contains("CPU 0")) << line;
        } else {
            summary = j;
        }
    }
    EXPECT_GE(readings, 4);
    ASSERT_EQ(summary["type"], "summary") << r.output;
    EXPECT_GT(device(summary, "GPU 0")->at("energy_j").get<double>(), 0.0);
    EXPECT_GE(summary["time_s"].get<double>(), 0.3);

    const auto trace = nlohmann::json::parse(read_file(trace_path));
    std::set<std::string> tracks;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "C") tracks.insert(e["name"].get<std::string>());
    }
    EXPECT_EQ(tracks, (std::set<std::string>{"GPU 0", "GPU 1", "CPU 0"}));

    // CSV: a header, then one row per reading.
    const auto csv = run(env_ + zeus::testing::zeus_cli_path() +
                         " power --simulate --interval 0.1 --duration 0.35 --format csv --cpus none");
    ASSERT_EQ(csv.exit_code, 0) << csv.output;
    EXPECT_NE(csv.output.find("timestamp,elapsed_s,GPU 0 power (W),GPU 1 power (W)\n"), std::string::npos)
        << csv.output;
}

TEST_F(MeasureCommands, RunTraceOpensAsPowerTracksAndAWindowSpan) {
    const auto trace_path = dir_ / "run.json";
    const auto report_path = dir_ / "report.json";
    const auto r = run(env_ + zeus::testing::zeus_cli_path() + " run --simulate --format json --output " +
                       report_path.string() + " --trace " + trace_path.string() + " -- " +
                       zeus::testing::zeus_sim_cli_path() + " burn --gpu 0 --seconds 0.6 --util 0.9");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto report = nlohmann::json::parse(read_file(report_path));
    const auto trace = nlohmann::json::parse(read_file(trace_path));
    ASSERT_TRUE(trace["traceEvents"].is_array());

    std::map<std::string, std::vector<std::pair<double, double>>> tracks;  // Perfetto's track names
    const nlohmann::json* span = nullptr;
    std::set<std::string> metadata;
    double last_ts = -1;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "M") {
            metadata.insert(e["name"].get<std::string>());
            continue;
        }
        EXPECT_GE(e["ts"].get<double>(), last_ts) << e.dump();
        last_ts = e["ts"].get<double>();
        if (e["ph"] == "C") {
            for (const auto& [key, value] : e["args"].items()) {
                tracks[e["name"].get<std::string>() + " " + key].emplace_back(e["ts"].get<double>(),
                                                                              value.get<double>());
            }
        } else if (e["ph"] == "X") {
            span = &e;
        }
    }
    EXPECT_TRUE(metadata.count("process_name") && metadata.count("thread_name"));
    ASSERT_NE(span, nullptr) << trace.dump(1);
    EXPECT_NE((*span)["name"].get<std::string>().find("burn"), std::string::npos);
    const double start = (*span)["ts"].get<double>();
    const double dur = (*span)["dur"].get<double>();
    EXPECT_NEAR(dur / 1e6, report["time_s"].get<double>(), 0.02);
    EXPECT_GE(dur, 0.6e6);
    for (const auto* name : {"GPU 0", "GPU 1", "CPU 0"}) {
        EXPECT_DOUBLE_EQ((*span)["args"]["energy_j"][name].get<double>(), device(report, name)->at("energy_j").get<double>());
    }
    ASSERT_TRUE(tracks.count("GPU 0 power (W)") && tracks.count("GPU 1 power (W)") && tracks.count("CPU 0 power (W)"))
        << trace.dump(1);
    double peak0 = 0, peak1 = 0;
    for (const auto& [ts, w] : tracks["GPU 0 power (W)"]) {
        EXPECT_GE(ts, start);
        EXPECT_LE(ts, start + dur);
        peak0 = std::max(peak0, w);
    }
    for (const auto& [ts, w] : tracks["GPU 1 power (W)"]) peak1 = std::max(peak1, w);
    EXPECT_GT(tracks["GPU 0 power (W)"].size(), 3U);  // sampled through the burn, not just the edges
    EXPECT_GT(peak0, peak1);                          // the burn shows on GPU 0's track
    // The area under GPU 0's track is its energy, to within the sampling.
    double area = 0;
    const auto& gpu0 = tracks["GPU 0 power (W)"];
    for (std::size_t i = 0; i + 1 < gpu0.size(); ++i) area += gpu0[i].second * (gpu0[i + 1].first - gpu0[i].first) / 1e6;
    const double energy = device(report, "GPU 0")->at("energy_j").get<double>();
    EXPECT_NEAR(area, energy, 0.2 * peak0 + 0.1 * energy) << trace.dump(1);
}

}  // namespace
}  // namespace zeus::cli
