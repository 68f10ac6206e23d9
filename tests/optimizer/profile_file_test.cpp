// The profile file (the original's JSON), window names, and reading the
// recorded A40 window logs in data/replay-logs through ReplayMonitor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "zeus/monitor/replay_monitor.hpp"
#include "zeus/optimizer/power_limit_profile.hpp"
#include "support/build_paths.hpp"

namespace zeus::optimizer {
namespace {

namespace fs = std::filesystem;

class ProfileFile : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("zeus-plo-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path write(const std::string& name, const std::string& text) {
        const auto path = dir_ / name;
        std::ofstream(path) << text;
        return path;
    }
    fs::path dir_;
};

// The log's rows as plain numbers, parsed here independently of the product.
struct Row {
    std::string name;
    double elapsed = 0;
    std::vector<double> energy;
};
std::vector<Row> plain_rows(const fs::path& path, std::size_t* gpu_columns) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    *gpu_columns = static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) - 2;
    std::vector<Row> rows;
    while (std::getline(in, line)) {
        std::stringstream fields(line);
        std::string field;
        Row row;
        std::getline(fields, field, ',');  // start_time
        std::getline(fields, row.name, ',');
        std::getline(fields, field, ',');
        row.elapsed = std::stod(field);
        while (std::getline(fields, field, ',')) row.energy.push_back(std::stod(field));
        rows.push_back(row);
    }
    return rows;
}

std::vector<fs::path> replay_logs() {
    std::vector<fs::path> logs;
    for (const auto& entry : fs::directory_iterator(zeus::testing::data_dir() + "/replay-logs"))
        logs.push_back(entry.path());
    std::sort(logs.begin(), logs.end());
    return logs;
}

TEST_F(ProfileFile, SavedProfilesLoadBackExactly) {
    PowerLimitProfile profile{{{Milliwatts(300000), Joules(6224.886), Seconds(24.0116)},
                               {Milliwatts(262500), Joules(6122.302), Seconds(24.0622)}},
                              40};
    const auto path = dir_ / "nested" / "profile.json";
    ASSERT_TRUE(save_power_limit_profile(path, profile).ok());
    auto loaded = load_power_limit_profile(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    ASSERT_EQ(loaded->measurements.size(), 2U);
    for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(loaded->measurements[k].power_limit, profile.measurements[k].power_limit);
        EXPECT_EQ(loaded->measurements[k].energy.count(), profile.measurements[k].energy.count());
        EXPECT_EQ(loaded->measurements[k].time.count(), profile.measurements[k].time.count());
    }
    EXPECT_EQ(loaded->profile_steps, 40U);
    // Whole watts are written as integers, as the original's pydantic model requires.
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("\"power_limit\": 300,"), std::string::npos) << text;
    EXPECT_NE(text.find("\"power_limit\": 262.5,"), std::string::npos) << text;
    // Nothing but the profile is left behind in the directory.
    EXPECT_EQ(std::distance(fs::directory_iterator(path.parent_path()), fs::directory_iterator{}), 1);
}

TEST_F(ProfileFile, TheOriginalsFileLoads) {
    const auto path = write("original.json", R"({
    "measurements": [
        {"power_limit": 300, "energy": 6224.886, "time": 24.0116},
        {"power_limit": 275, "energy": 6122.302, "time": 24.0622}
    ]
})");
    auto loaded = load_power_limit_profile(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_EQ(loaded->measurements.at(1).power_limit, Milliwatts(275000));
    EXPECT_FALSE(loaded->profile_steps.has_value());
}

TEST_F(ProfileFile, BadProfilesAreErrorsNamingTheEntry) {
    struct Case {
        const char* text;
        const char* says;
    };
    for (const Case& c : std::vector<Case>{
             {"{", "not JSON"},
             {"[]", "no \"measurements\""},
             {R"({"measurements": []})", "is empty"},
             {R"({"measurements": [{"power_limit": 300, "energy": 1}]})", "measurements[0] has no \"time\""},
             {R"({"measurements": [{"power_limit": 300, "energy": 1, "time": 1}, {"power_limit": 0, "energy": 1, "time": 1}]})",
              "measurements[1].power_limit is 0"},
             {R"({"measurements": [{"power_limit": 300, "energy": -5, "time": 1}]})", "energy is -5"},
             {R"({"measurements": [{"power_limit": "300", "energy": 1, "time": 1}]})", "not a number"},
             {R"({"measurements": [{"power_limit": 300, "energy": 1, "time": 1}], "profile_steps": 0})",
              "profile_steps"},
         }) {
        const auto path = write("bad.json", c.text);
        auto loaded = load_power_limit_profile(path);
        ASSERT_FALSE(loaded.ok()) << c.text;
        EXPECT_EQ(loaded.error().code, ErrorCode::InvalidConfig) << c.text;
        EXPECT_NE(loaded.error().message.find(c.says), std::string::npos) << loaded.error().message;
        EXPECT_NE(loaded.error().message.find(path.string()), std::string::npos);
        EXPECT_FALSE(loaded.error().hint.empty());
    }
    auto missing = load_power_limit_profile(dir_ / "absent.json");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
}

TEST_F(ProfileFile, SavingIntoAnUnwritableDirectoryFailsCleanly) {
    const auto blocker = write("file", "x");  // a file where a directory should be
    auto s = save_power_limit_profile(blocker / "profile.json", PowerLimitProfile{{{Milliwatts(1000), Joules(1), Seconds(1)}}, {}});
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("profile.json"), std::string::npos);
}

TEST(WindowNames, RoundTripWholeAndFractionalWatts) {
    EXPECT_EQ(power_limit_window_name(Milliwatts(300000)), "__GlobalPowerLimitOptimizer_300");
    for (std::int64_t mw : {300000, 262500, 100001, 1000}) {
        EXPECT_EQ(power_limit_from_window_name(power_limit_window_name(Milliwatts(mw))), Milliwatts(mw)) << mw;
    }
    for (const char* name : {"step", "__GlobalPowerLimitOptimizer_", "__GlobalPowerLimitOptimizer_x",
                             "__GlobalPowerLimitOptimizer_-5", "__GlobalPowerLimitOptimizer_300W"}) {
        EXPECT_FALSE(power_limit_from_window_name(name).has_value()) << name;
    }
}

TEST(ReplayLogs, EveryRecordedLogReadsAsItsRows) {
    const auto logs = replay_logs();
    ASSERT_EQ(logs.size(), 6U);
    for (const auto& log : logs) {
        std::size_t columns = 0;
        const auto rows = plain_rows(log, &columns);
        auto profile = read_power_limit_log(log);
        ASSERT_TRUE(profile.ok()) << profile.error().describe();
        EXPECT_EQ(profile->gpu_count, columns) << log;
        ASSERT_EQ(profile->measurements.size(), rows.size()) << log;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            double energy = 0;
            for (double e : rows[k].energy) energy += e;
            const auto limit_w = std::stoi(rows[k].name.substr(rows[k].name.rfind('_') + 1));
            EXPECT_EQ(profile->measurements[k].power_limit, Milliwatts(limit_w * 1000));
            EXPECT_DOUBLE_EQ(profile->measurements[k].energy.count(), energy);
            EXPECT_DOUBLE_EQ(profile->measurements[k].time.count(), rows[k].elapsed);
        }
    }
}

TEST(ReplayLogs, TheMonitorReplaysRowsInOrder) {
    const auto log = fs::path(zeus::testing::data_dir() + "/replay-logs/A40+resnet50+gpu0,1,2,3.csv");
    std::size_t columns = 0;
    const auto rows = plain_rows(log, &columns);
    auto monitor = ReplayMonitor::open(log).value();
    EXPECT_EQ(monitor->gpu_indices(), (std::vector<unsigned>{0, 1, 2, 3}));
    // A cancelled window is not in the log and consumes no row.
    ASSERT_TRUE(monitor->begin_window(rows[0].name).ok());
    EXPECT_EQ(monitor->end_window(rows[0].name, true, true).value().total_gpu_energy().count(), 0.0);
    EXPECT_EQ(monitor->rows_left(), rows.size());
    for (const auto& row : rows) {
        ASSERT_TRUE(monitor->begin_window(row.name).ok());
        const Measurement m = monitor->end_window(row.name).value();
        EXPECT_DOUBLE_EQ(m.time.count(), row.elapsed);
        for (unsigned g = 0; g < 4; ++g) {
            EXPECT_DOUBLE_EQ(m.gpu_energy.at(g).energy.count(), row.energy[g]);
            EXPECT_EQ(m.gpu_energy.at(g).source, EnergySource::WindowLog);
        }
    }
    ASSERT_TRUE(monitor->begin_window("one more").ok());
    auto past_end = monitor->end_window("one more");
    ASSERT_FALSE(past_end.ok());
    EXPECT_EQ(past_end.error().code, ErrorCode::NoData);
}

TEST(ReplayLogs, AWindowOutOfOrderIsNamed) {
    auto monitor = ReplayMonitor::open(zeus::testing::data_dir() + "/replay-logs/A40+resnet50+gpu0.csv").value();
    ASSERT_TRUE(monitor->begin_window("__GlobalPowerLimitOptimizer_275").ok());
    auto m = monitor->end_window("__GlobalPowerLimitOptimizer_275");
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code, ErrorCode::InvalidState);
    EXPECT_NE(m.error().message.find("'__GlobalPowerLimitOptimizer_300'"), std::string::npos) << m.error().message;
    EXPECT_FALSE(monitor->end_window("never begun").ok());
}

TEST_F(ProfileFile, MalformedLogsNameTheLine) {
    struct Case {
        const char* text;
        const char* says;
    };
    for (const Case& c : std::vector<Case>{
             {"", "empty"},
             {"time,name\n", "header does not start"},
             {"start_time,window_name,elapsed_time,gpu0_power\n", "'gpu0_power'"},
             {"start_time,window_name,elapsed_time,gpu0_energy,gpu0_energy\n", "two columns"},
             {"start_time,window_name,elapsed_time,gpu0_energy\n1,a,2\n", "line 2: 3 fields, expected 4"},
             {"start_time,window_name,elapsed_time,gpu0_energy\n1,a,2,3\n1,b,x,3\n", "line 3: elapsed_time 'x'"},
             {"start_time,window_name,elapsed_time,gpu0_energy\n1,a,2,nan\n", "gpu0_energy 'nan'"},
         }) {
        auto log = read_window_log(write("log.csv", c.text));
        ASSERT_FALSE(log.ok()) << c.text;
        EXPECT_NE(log.error().message.find(c.says), std::string::npos) << log.error().message;
    }
    // Names are not quoted in the format: one with commas spans fields.
    auto log = read_window_log(write("commas.csv", "start_time,window_name,elapsed_time,gpu1_energy\n1,a,b,c,2.5,7\n"));
    ASSERT_TRUE(log.ok()) << log.error().describe();
    EXPECT_EQ(log->windows.at(0).name, "a,b,c");
    EXPECT_EQ(log->windows.at(0).elapsed.count(), 2.5);
    EXPECT_EQ(log->gpu_indices, std::vector<unsigned>{1});
    auto none = read_power_limit_log(write("none.csv", "start_time,window_name,elapsed_time,gpu0_energy\n1,step,2,3\n"));
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code, ErrorCode::NoData);
}

}  // namespace
}  // namespace zeus::optimizer
