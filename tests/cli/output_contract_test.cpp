// The CLI's contract with scripts (issue 16 items 3 and 7): every --format
// json|csv output is one document that parses, a command's own output never
// mixes with zeus's report, and every rejected option exits with the
// documented code (2; 125 for `run`) and says "zeus: ..." and the fix.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_output.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;

class OutputContract : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-contract-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        std::ofstream(dir_ / "sim.json") << R"({"gpus": [{"model": "A100-SXM4-40GB", "count": 2}]})";
        env_ = "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY ZEUS_SIM_STATE=" +
               (dir_ / "state").string() + " ZEUS_SIM_CONFIG=" + (dir_ / "sim.json").string() + " ";
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    [[nodiscard]] SeparateOutput zeus(const std::string& args) const {
        return capture_separately(env_ + zeus::testing::zeus_cli_path() + " " + args);
    }
    fs::path dir_;
    std::string env_;
};

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// A CSV document: a header and rows with as many fields as the header.
void expect_csv(const std::string& text, std::size_t min_rows) {
    const auto rows = lines(text);
    ASSERT_GE(rows.size(), 1 + min_rows) << text;
    const auto count = [](const std::string& row) {
        std::size_t fields = 1;
        bool quoted = false;
        for (const char c : row) {
            if (c == '"') quoted = !quoted;
            if (c == ',' && !quoted) ++fields;
        }
        return fields;
    };
    for (const auto& row : rows) EXPECT_EQ(count(row), count(rows.front())) << text;
}

// ---- item 3: one document, never mixed with a command's output ----

TEST_F(OutputContract, RunLeavesStandardOutputToTheCommand) {
    // Default: the command's output passes through untouched, the report goes to standard error.
    auto r = zeus("run --simulate --cpus none --format json -- sh -c 'echo child-line; echo child-err >&2'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "child-line\n");
    const auto report_at = r.err.find('{');
    ASSERT_NE(report_at, std::string::npos) << r.err;
    const auto report = nlohmann::json::parse(r.err.substr(report_at), nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << r.err;
    EXPECT_EQ(report["exit_code"], 0);

    // --output -: the report alone on standard output; the command's output goes to standard error.
    r = zeus("run --simulate --cpus none --format json --output - -- sh -c 'echo child-line'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto alone = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(alone.is_discarded()) << r.out;
    EXPECT_EQ(alone["devices"].size(), 2U);
    EXPECT_NE(r.err.find("child-line"), std::string::npos) << r.err;

    // CSV likewise.
    r = zeus("run --simulate --cpus none --format csv --output - -- sh -c 'echo child-line'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_csv(r.out, 2);
}

TEST_F(OutputContract, ProfileOfACommandLeavesStandardOutputToIt) {
    const std::string args = "profile --simulate --mode measure --measurement-duration 0.05 --cooldown-duration 0 "
                             "--warmup-iterations 0 --calibration-iterations 2 --format json ";
    auto r = zeus(args + "-- sh -c 'echo step'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& line : lines(r.out)) EXPECT_EQ(line, "step") << r.out;
    EXPECT_NE(r.err.find("\"trial\""), std::string::npos) << r.err;
    r = zeus(args + "--output - -- sh -c 'echo step'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << r.out;
    EXPECT_TRUE(report.contains("trial"));
}

TEST_F(OutputContract, EnergyAndPowerOutputsParse) {
    auto r = zeus("energy --simulate --cpus none --duration 0.2 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
    r = zeus("energy --simulate --cpus none --duration 0.2 --format csv");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_csv(r.out, 2);
    // power: JSON Lines, every line one object; the last is the summary.
    r = zeus("power --simulate --cpus none --duration 0.35 --interval 0.1 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json_lines = lines(r.out);
    ASSERT_GE(json_lines.size(), 2U) << r.out;
    for (const auto& line : json_lines) EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
    EXPECT_EQ(nlohmann::json::parse(json_lines.back())["type"], "summary");
    r = zeus("power --simulate --cpus none --duration 0.35 --interval 0.1 --format csv");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_csv(r.out, 1);
}

TEST_F(OutputContract, ShowEnvAndPowerLimitReportParse) {
    auto r = zeus("show-env --simulate --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
    r = zeus(std::string("power-limit report --format json --log \"") + zeus::testing::data_dir() +
             "/replay-logs/A40+resnet18+gpu0.csv\"");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
}

TEST_F(OutputContract, SimulateAllAsJsonIsOneListOfWorkloads) {
    const std::string trace = zeus::testing::data_dir() + "/power-traces/summary_power_v100.csv";
    // The trace's distinct workloads, counted here from the file.
    std::ifstream in(trace);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> keys;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream row(line);
        for (std::string field; std::getline(row, field, ',');) f.push_back(field);
        const std::string key = f[0] + "," + f[1] + "," + f[2] + "," + f[3];
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    auto r = zeus("power-limit simulate --trace " + trace + " --all --format json --profile-steps 5 --warmup-steps 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto list = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(list.is_discarded()) << r.out.substr(0, 400);
    ASSERT_TRUE(list.is_array());
    ASSERT_EQ(list.size(), keys.size());
    EXPECT_EQ(list[0]["dataset"].get<std::string>() + "," + list[0]["network"].get<std::string>() + "," +
                  std::to_string(list[0]["batch_size"].get<int>()) + "," + list[0]["optimizer"].get<std::string>(),
              keys[0]);
    EXPECT_TRUE(list[0]["report"].contains("choices"));
    // Text keeps a header per workload.
    r = zeus("power-limit simulate --trace " + trace + " --all --profile-steps 5 --warmup-steps 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::size_t headers = 0;
    for (const auto& l : lines(r.out)) headers += l.starts_with("== ") ? 1 : 0;
    EXPECT_EQ(headers, keys.size());
}

// ---- item 7: option errors ----

TEST_F(OutputContract, RejectedOptionsExitWithTheDocumentedCodeAndTheFix) {
    struct Case {
        std::string args;
        int code;
        std::string says;
    };
    const std::vector<Case> cases{
        {"power --simulate --interval nan", 2, "--interval: 'nan' is not a finite number"},
        {"power --simulate --interval inf", 2, "'inf' is not a finite number"},
        {"power --simulate --duration nan", 2, "--duration: 'nan' is not a finite number"},
        {"energy --simulate --duration -1", 2, "-1 is out of range"},
        {"run --simulate --interval nan -- true", 125, "--interval: 'nan' is not a finite number"},
        {"run --simulate --format yaml -- true", 125, "'yaml' is not one of human, csv, json"},
        {"power --simulate --bogus", 2, "unknown option or argument --bogus"},
        {"power --simulate --gpus", 2, "--gpus needs a value"},
        {"demo --simulate --util nan", 2, "'nan' is not a finite number"},
        {"power-limit simulate --trace x.csv --pl-step nan", 2, "--pl-step: 'nan' is not a finite number"},
        {"power-limit simulate --trace x.csv --gpus 17", 2, "17 is out of range"},
        {"power-limit simulate --pl-step 5", 2, "--trace is required"},
        {"profile --simulated-work nan", 2, "--simulated-work: 'nan' is not a finite number"},
        {"profile --simulated-work 0.1 --measurement-range 1e9", 2, "1e9 s is out of range"},
        {"profile --simulated-work 0.1 --mode measurement --measurement-duration 3", 2,
         "--mode measurement sweeps the measurement duration, so it takes no --measurement-duration"},
        {"profile --simulated-work 0.1 --mode cooldown --measurement-range 1,2", 2,
         "--mode cooldown holds the measurement duration fixed, so it takes no --measurement-range"},
        {"profile --simulated-work 0.1 --mode measure --measurement-duration 1 --cooldown-duration 1 "
         "--cooldown-range 1,2",
         2, "so it takes no --cooldown-range"},
        {"profile --simulated-work 0.1 --cooldown-duration 4", 2, "so it takes no --cooldown-duration"},
    };
    for (const auto& c : cases) {
        const auto r = zeus(c.args);
        EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
        EXPECT_TRUE(r.err.starts_with("zeus: ")) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
        // The fix: either a "fix:" line or the error's own hint in parentheses.
        EXPECT_TRUE(r.err.find("fix: ") != std::string::npos || r.err.find(" (") != std::string::npos)
            << c.args << "\n" << r.err;
        EXPECT_EQ(r.out, "") << c.args;
    }
}

TEST_F(OutputContract, ProfileShowsThePlannedTotalBeforeStarting) {
    // Computed here: parameters mode, measurement sweep at the longest cool-down
    // (1 s) after 1 warm-up trial of the longest window, then the cool-down
    // sweep at the longest window (0.2 s).
    const auto r = zeus("profile --simulated-work 0.01 --measurement-range 0.1,0.2 --cooldown-range 0,1 --trials 2 "
                        "--warmup-trials 1 --warmup-iterations 1 --calibration-iterations 2 --threshold 1000");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double seconds = 1 * 0.2 + 2 * ((1 + 0.1) + (1 + 0.2)) + 2 * ((0 + 0.2) + (1 + 0.2));
    const std::size_t trials = 1 + 2 * 2 + 2 * 2;
    const std::string expected = "zeus: profile: planned: " + std::to_string(trials) + " trials, about " +
                                 std::to_string(static_cast<int>(std::lround(seconds))) + " s of measurement";
    EXPECT_NE(r.err.find(expected), std::string::npos) << expected << "\n" << r.err;
}

}  // namespace
}  // namespace zeus::testing
