// `zeus bso simulate`, run as a user would: the power-limit optimizer runs on
// a simulated GPU following the trace, so its choice is checked against the
// trace's own cheapest limit (within the simulator's measurement noise), and
// every run's cost against the trace at the limit it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/command_output.hpp"
#include "support/csv_fields.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

const std::string kData = zeus::testing::data_dir();

const auto& fields = csv_fields;

TEST(BsoSimulateCli, TheOptimizersChoicesCostWhatTheTraceSays) {
    const std::string v100 = kData + "/power-traces/summary_power_v100.csv";
    const auto r = capture_separately(zeus::testing::zeus_cli_path() + " bso simulate --train " + kData +
                                      "/summary_train.csv --power-trace " + v100 +
                                      " --workload librispeech/deepspeech2 --recurrences 12 --format json");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto all = nlohmann::json::parse(r.out);
    ASSERT_EQ(all.size(), 1u);
    const auto& result = all[0];
    EXPECT_EQ(result["workload"], "librispeech/deepspeech2");
    EXPECT_EQ(result["recurrences"], 12);
    // limit -> {time, power} per batch size, and the GPU's highest limit.
    std::map<long long, std::map<double, std::pair<double, double>>> trace;
    double gpu_max = 0;
    std::ifstream in(v100);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        const auto f = fields(line);
        gpu_max = std::max(gpu_max, std::stod(f[4]));
        if (f[0] == "librispeech" && f[3] == "adamw")
            trace[std::stoll(f[2])][std::stod(f[4])] = {std::stod(f[5]), std::stod(f[6])};
    }
    EXPECT_EQ(result["max_power_limit_w"].get<double>(), gpu_max);
    double total_energy = 0;
    for (const auto& run : result["runs"]) {
        const auto& limits = trace.at(run["batch_size"].get<long long>());
        const double max_limit = limits.rbegin()->first;
        const auto cost = [&](const std::pair<double, double>& e) { return 0.5 * e.first * e.second + 0.5 * max_limit * e.first; };
        double least = INFINITY;
        for (const auto& [w, e] : limits) least = std::min(least, cost(e));
        const auto chosen = limits.at(run["power_limit_w"].get<double>());
        // The optimizer measured the simulated GPU: its pick is the trace's
        // cheapest or within 2% of it.
        EXPECT_LE(cost(chosen), 1.02 * least) << run;
        const auto epochs = run["epochs"].get<double>();
        double first_time = chosen.first, first_energy = chosen.first * chosen.second;
        if (run["profiled"].get<bool>()) {
            first_time = first_energy = 0;
            for (const auto& [w, e] : limits) {
                first_time += e.first / static_cast<double>(limits.size());
                first_energy += e.first * e.second / static_cast<double>(limits.size());
            }
        }
        const double time = first_time + (epochs - 1) * chosen.first;
        const double energy = first_energy + (epochs - 1) * chosen.first * chosen.second;
        EXPECT_NEAR(run["time_s"].get<double>(), time, 1e-9 * time) << run;
        EXPECT_NEAR(run["energy_j"].get<double>(), energy, 1e-9 * energy) << run;
        total_energy += energy;
    }
    const double baseline = result["baseline"]["energy_j"].get<double>();
    EXPECT_NEAR(result["energy_ratio"].get<double>(), total_energy / (12 * baseline), 1e-9);
}

// An installed zeus outside the repository: the default traces (data/...)
// are not there, and the error names the flag to give (issue 24).
TEST(BsoSimulateCli, OutsideTheRepositoryTheMissingDefaultNamesItsFlag) {
    const auto r = capture_separately("cd / && " + zeus::testing::zeus_cli_path() + " bso simulate");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--train: the default data/summary_train.csv is not under the current directory (/)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("give --train PATH"), std::string::npos) << r.err;
    const auto traces = capture_separately("cd / && " + zeus::testing::zeus_cli_path() + " bso simulate --train " +
                                           kData + "/summary_train.csv");
    EXPECT_EQ(traces.exit_code, 2) << traces.err;
    EXPECT_NE(traces.err.find("--power-trace: the default data/power-traces/"), std::string::npos) << traces.err;
}

TEST(BsoSimulateCli, BadInputIsNamed) {
    struct Case {
        std::string args;
        std::string says;
    };
    for (const auto& c : std::vector<Case>{
             {"--workload mnist/lenet", "not one of the paper's workloads"},
             {"--beta -1", "--beta -1: not a positive number"},
             {"--train /nonexistent/train.csv", "/nonexistent/train.csv"},
             {"--power-trace /nonexistent/summary_power_v100.csv", "/nonexistent/summary_power_v100.csv"},
         }) {
        std::string args = " bso simulate --recurrences 1 " + c.args;
        if (c.args.find("--train") == std::string::npos) args += " --train " + kData + "/summary_train.csv";
        if (c.args.find("--power-trace") == std::string::npos)
            args += " --power-trace " + kData + "/power-traces/summary_power_v100.csv";
        const auto r = capture_separately(zeus::testing::zeus_cli_path() + args);
        EXPECT_EQ(r.exit_code, 2) << c.args << r.out << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
        EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
    }
}

}  // namespace
}  // namespace zeus::testing
