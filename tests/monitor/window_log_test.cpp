// The window log (src/monitor/window_log.cpp): the original's CSV format, a
// lost GPU written as 'nan', and reading it back, over fake GPUs whose
// measurements the log must repeat exactly.
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/monitor/replay_monitor.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "monitor/fake_gpus_fixture.hpp"
#include "support/fake_gpu.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;

class WindowLog : public testing::TwoFakeGpus {};

TEST_F(WindowLog, CsvLogMatchesTheOriginalFormat) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.gpu_indices = std::vector<unsigned>{1, 0};
    options.log_file = (dir_ / "logs" / "windows.csv").string();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    ASSERT_TRUE(monitor->begin_window("a").ok());
    std::this_thread::sleep_for(120ms);
    const Measurement a = monitor->end_window("a").value();
    ASSERT_TRUE(monitor->begin_window("cancelled").ok());
    (void)monitor->end_window("cancelled", true, true);
    std::ifstream log(*options.log_file);
    std::string header;
    std::string row;
    std::string extra;
    std::getline(log, header);
    std::getline(log, row);
    EXPECT_FALSE(std::getline(log, extra)) << "a cancelled window must not be logged";
    EXPECT_EQ(header, "start_time,window_name,elapsed_time,gpu1_energy,gpu0_energy");
    std::vector<std::string> fields;
    std::stringstream ss(row);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    ASSERT_EQ(fields.size(), 5U) << row;
    EXPECT_EQ(fields[1], "a");
    EXPECT_NEAR(std::stod(fields[0]),
                std::chrono::duration<double>(a.start_time.time_since_epoch()).count(), 1e-6);
    EXPECT_DOUBLE_EQ(std::stod(fields[2]), a.time.count());
    EXPECT_DOUBLE_EQ(std::stod(fields[3]), a.gpu_energy.at(1).energy.count());
    EXPECT_DOUBLE_EQ(std::stod(fields[4]), a.gpu_energy.at(0).energy.count());
}

// A GPU lost in a window is logged as 'nan' (what the original's float()
// reads back), never 0.0, and replaying that row says why it cannot.
TEST_F(WindowLog, CsvLogWritesALostGpuAsNan) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions options;
    options.log_file = (dir_ / "windows.csv").string();
    // The end edge reads the GPU that fails right before it (a sampled edge
    // sees the failure once the watcher has read it).
    options.edges = WindowEdges::Synchronous;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    ASSERT_TRUE(monitor->begin_window("lossy").ok());
    std::this_thread::sleep_for(120ms);
    testing::fake(gpus, 1).lose();
    const Measurement m = monitor->end_window("lossy").value();
    ASSERT_TRUE(m.gpu_energy.at(1).lost);
    std::ifstream log(*options.log_file);
    std::string header;
    std::string row;
    std::getline(log, header);
    std::getline(log, row);
    EXPECT_EQ(header, "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy");
    EXPECT_TRUE(row.ends_with(",nan")) << row;
    EXPECT_EQ(row.find(",nan,"), std::string::npos) << row;  // GPU 0 was measured
    const auto replay = read_window_log(*options.log_file);
    ASSERT_FALSE(replay.ok());
    EXPECT_NE(replay.error().message.find("gpu1_energy 'nan': the GPU was lost"), std::string::npos)
        << replay.error().message;
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string text_of(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Logs one window named `name` to `log` through a monitor of its own.
void log_one_window(Gpus& gpus, const std::filesystem::path& log, const std::string& name) {
    EnergyMonitorOptions options;
    options.log_file = log.string();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    ASSERT_TRUE(monitor->begin_window(name).ok());
    ASSERT_TRUE(monitor->end_window(name).ok());
}

// A second monitor (a second `zeus energy --log-file`) adds its rows to a log
// of the same GPUs under the one header: the first run's rows stay, and the
// file is still one CSV that the replay reads whole. Before, it was truncated.
TEST_F(WindowLog, ALogOfTheSameGpusIsAppendedTo) {
    Gpus gpus = open_gpus();
    const auto log = dir_ / "windows.csv";
    log_one_window(gpus, log, "first");
    log_one_window(gpus, log, "second");
    const auto lines = lines_of(log);
    ASSERT_EQ(lines.size(), 3U) << text_of(log);
    EXPECT_EQ(lines[0], "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy");
    EXPECT_NE(lines[1].find(",first,"), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find(",second,"), std::string::npos) << lines[2];
    const auto replay = read_window_log(log.string());
    ASSERT_TRUE(replay.ok()) << replay.error().message;
    EXPECT_EQ(replay.value().windows.size(), 2U);
}

// A row cut short (its writer was killed mid-line) is ended before ours, so
// that the new row is a line of its own.
TEST_F(WindowLog, ARowCutShortIsEndedBeforeTheNextRun) {
    Gpus gpus = open_gpus();
    const auto log = dir_ / "windows.csv";
    std::ofstream(log) << "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\n1.5,cut,0.2";
    log_one_window(gpus, log, "next");
    const auto lines = lines_of(log);
    ASSERT_EQ(lines.size(), 3U) << text_of(log);
    EXPECT_EQ(lines[1], "1.5,cut,0.2");
    EXPECT_NE(lines[2].find(",next,"), std::string::npos) << lines[2];
}

// A file that is not a log of these GPUs (other GPUs, or not a window log at
// all) is refused with the path and the fix, and left as it was.
TEST_F(WindowLog, AnotherFileIsRefusedAndLeftAlone) {
    Gpus gpus = open_gpus();
    for (const std::string& before :
         {std::string("start_time,window_name,elapsed_time,gpu3_energy\n1,a,2,3\n"), std::string("notes I keep\n")}) {
        const auto log = dir_ / "other.csv";
        std::ofstream(log) << before;
        EnergyMonitorOptions options;
        options.log_file = log.string();
        const auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options);
        ASSERT_FALSE(monitor.ok()) << before;
        const std::string message = monitor.error().describe();
        EXPECT_NE(message.find(log.string()), std::string::npos) << message;
        EXPECT_NE(message.find(before.substr(0, before.find('\n'))), std::string::npos) << message;
        EXPECT_NE(message.find("give another log file, or remove this one"), std::string::npos) << message;
        EXPECT_EQ(text_of(log), before);
    }
}

}  // namespace
}  // namespace zeus
