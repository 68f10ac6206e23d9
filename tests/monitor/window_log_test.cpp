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

}  // namespace
}  // namespace zeus
