// The record and the line of one window, its start carried from prolog to
// epilog, a window whose zeusd is down, and the task's stderr handed over.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "slurm/energy_record.hpp"
#include "slurm/task_stderr.hpp"
#include "support/test_directory.hpp"

namespace zeus::slurm {
namespace {

using std::chrono::system_clock;

EnergyRecord measured_record() {
    EnergyRecord record;
    record.identity = RecordIdentity{12, "0", "node1", 1000};
    record.start.time = system_clock::time_point(std::chrono::seconds(1'700'000'000));
    record.start.gpus = GpuSelection{{0, 2}, "SLURM_STEP_GPUS"};
    record.start.counters = std::map<unsigned, Millijoules>{{0, Millijoules(5)}, {2, Millijoules(7)}};
    record.end = record.start.time + std::chrono::milliseconds(2500);
    record.energy = std::map<unsigned, Millijoules>{{0, Millijoules(1'500'250)}, {2, Millijoules(250)}};
    record.tasks = {TaskEnd{0, 3, std::nullopt}, TaskEnd{1, std::nullopt, 15}};
    return record;
}

TEST(SlurmEnergyRecord, JsonHoldsEachGpuTheTotalTheWindowAndTheTasks) {
    const auto json = nlohmann::json::parse(record_json(measured_record()));
    EXPECT_EQ(json["schema"], "zeus-slurm-record/1");
    EXPECT_EQ(json["job_id"], 12);
    EXPECT_EQ(json["step"], "0");
    EXPECT_EQ(json["node"], "node1");
    EXPECT_EQ(json["gpus"], nlohmann::json::parse("[0, 2]"));
    EXPECT_EQ(json["gpu_source"], "SLURM_STEP_GPUS");
    EXPECT_DOUBLE_EQ(json["gpu_energy_j"]["0"].get<double>(), 1500.25);
    EXPECT_DOUBLE_EQ(json["gpu_energy_j"]["2"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(json["total_energy_j"].get<double>(), 1500.5);
    EXPECT_DOUBLE_EQ(json["duration_s"].get<double>(), 2.5);
    EXPECT_EQ(json["start"], "2023-11-14T22:13:20Z");
    EXPECT_TRUE(json["reason"].is_null());
    EXPECT_EQ(json["tasks"], nlohmann::json::parse(R"([{"task": 0, "exit_code": 3}, {"task": 1, "signal": 15}])"));
}

TEST(SlurmEnergyRecord, TheLineSaysTheEnergyOrWhyThereIsNone) {
    auto record = measured_record();
    EXPECT_EQ(stderr_line(record, "record /s/job-12/0.node1.json"),
              "zeus: job 12 step 0 on node1: GPUs 0,2: 1500.500 J in 2.50 s (record /s/job-12/0.node1.json)\n");
    record.energy.reset();
    record.reason = "no reading at its start: zeusd is down";
    EXPECT_EQ(stderr_line(record, "record /s/r.json"),
              "zeus: job 12 step 0 on node1: GPU energy not measured: no reading at its start: zeusd is down "
              "(record /s/r.json)\n");
    const auto json = nlohmann::json::parse(record_json(record));
    EXPECT_TRUE(json["total_energy_j"].is_null());
    EXPECT_TRUE(json["gpu_energy_j"].is_null());
    EXPECT_EQ(json["reason"], "no reading at its start: zeusd is down");
}

// measured_record() on a node whose two packages the step held whole.
EnergyRecord record_with_packages() {
    auto record = measured_record();
    record.start.cpu.holding = PackageHolding{{0, 1}, true, ""};
    record.start.cpu.package = CpuCounters{{0, Microjoules(11)}, {1, Microjoules(12)}};
    record.start.cpu.dram = CpuCounters{{0, Microjoules(13)}, {1, Microjoules(14)}};
    record.cpu_energy = CpuCounters{{0, Microjoules(100'500'000)}, {1, Microjoules(50'000'000)}};
    record.dram_energy = CpuCounters{{0, Microjoules(10'000'000)}, {1, Microjoules(5'250'000)}};
    return record;
}

TEST(SlurmEnergyRecord, WholePackagesAddTheirCpuAndDramEnergy) {
    const auto record = record_with_packages();
    const auto json = nlohmann::json::parse(record_json(record));
    EXPECT_EQ(json["cpu_packages"], nlohmann::json::parse("[0, 1]"));
    EXPECT_DOUBLE_EQ(json["cpu_energy_j"]["0"].get<double>(), 100.5);
    EXPECT_DOUBLE_EQ(json["cpu_energy_j"]["1"].get<double>(), 50.0);
    EXPECT_DOUBLE_EQ(json["dram_energy_j"]["0"].get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(json["dram_energy_j"]["1"].get<double>(), 5.25);
    EXPECT_TRUE(json["cpu_reason"].is_null());
    EXPECT_DOUBLE_EQ(json["total_energy_j"].get<double>(), 1500.5);  // the GPUs' alone, as before
    EXPECT_EQ(stderr_line(record, "record r.json"),
              "zeus: job 12 step 0 on node1: GPUs 0,2: 1500.500 J in 2.50 s; CPU packages 0,1: 150.500 J, DRAM: "
              "15.250 J (record r.json)\n");
}

TEST(SlurmEnergyRecord, ASharedPackageIsNullWithTheReasonAndLeavesTheLineAsItWas) {
    auto record = measured_record();
    record.start.cpu.holding.reason = "shares packages with other jobs: its 2 CPUs cover no whole CPU package";
    record.cpu_reason = record.start.cpu.holding.reason;
    const auto json = nlohmann::json::parse(record_json(record));
    EXPECT_EQ(json["cpu_packages"], nlohmann::json::array());
    EXPECT_TRUE(json["cpu_energy_j"].is_null());
    EXPECT_TRUE(json["dram_energy_j"].is_null());
    EXPECT_EQ(json["cpu_reason"], record.cpu_reason);
    EXPECT_EQ(stderr_line(record, "record r.json"),
              "zeus: job 12 step 0 on node1: GPUs 0,2: 1500.500 J in 2.50 s (record r.json)\n");
}

TEST(SlurmEnergyRecord, WholePackagesNotMeasuredSayWhyInTheLine) {
    auto record = record_with_packages();
    record.cpu_energy.reset();
    record.dram_energy.reset();
    record.cpu_reason = "no reading at its start: zeusd does not serve cpu-read";
    EXPECT_EQ(stderr_line(record, "record r.json"),
              "zeus: job 12 step 0 on node1: GPUs 0,2: 1500.500 J in 2.50 s; CPU packages 0,1 not measured: no "
              "reading at its start: zeusd does not serve cpu-read (record r.json)\n");
    const auto json = nlohmann::json::parse(record_json(record));
    EXPECT_TRUE(json["cpu_energy_j"].is_null());
    EXPECT_EQ(json["cpu_reason"], record.cpu_reason);
}

TEST(SlurmEnergyRecord, AWindowStartSurvivesTheTripFromPrologToEpilog) {
    const auto start = record_with_packages().start;
    const auto back = parse_window_start(window_start_json(start));
    ASSERT_TRUE(back.ok()) << back.error().describe();
    EXPECT_EQ(back->gpus.ids, start.gpus.ids);
    EXPECT_EQ(back->gpus.source, start.gpus.source);
    EXPECT_EQ(back->counters, start.counters);
    EXPECT_EQ(back->cpu.holding.packages, start.cpu.holding.packages);
    EXPECT_EQ(back->cpu.holding.whole_node, start.cpu.holding.whole_node);
    EXPECT_EQ(back->cpu.package, start.cpu.package);
    EXPECT_EQ(back->cpu.dram, start.cpu.dram);
    EXPECT_LT(std::chrono::abs(back->time - start.time), std::chrono::microseconds(1));
    const auto broken = parse_window_start("{\"start_unix_s\": 1");
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.error().describe().find("start record is unreadable"), std::string::npos);
}

TEST(SlurmEnergyRecord, ZeusdDownGivesARecordWithTheReasonNotANumber) {
    const auto zeusd = ZeusdConfig::unix_socket("/nonexistent/zeusd.sock");
    const auto start = begin_window(zeusd, GpuSelection{{0}, "SLURM_STEP_GPUS"}, PackageHolding{{0}, true, ""});
    EXPECT_FALSE(start.counters.has_value());
    EXPECT_NE(start.reason.find("/nonexistent/zeusd.sock"), std::string::npos) << start.reason;
    const auto record = end_window(zeusd, RecordIdentity{1, "0", "n", 0}, start);
    EXPECT_FALSE(record.energy.has_value());
    EXPECT_EQ(record.reason, start.reason);
    // The step held package 0: its CPU energy is not measured either, for the same reason.
    EXPECT_NE(record.cpu_reason.find("no reading at its start"), std::string::npos) << record.cpu_reason;
    EXPECT_NE(record.cpu_reason.find("/nonexistent/zeusd.sock"), std::string::npos) << record.cpu_reason;
    EXPECT_FALSE(record.cpu_energy.has_value());
}

TEST(SlurmEnergyRecord, NoGpusIsNothingToMeasure) {
    const auto start =
        begin_window(ZeusdConfig::unix_socket("/nonexistent/zeusd.sock"), GpuSelection{}, PackageHolding{});
    EXPECT_TRUE(start.no_gpus);
    EXPECT_FALSE(start.counters.has_value());
}

TEST(SlurmEnergyRecord, RecordsAreWrittenWholeIntoTheJobsFolder) {
    zeus::testing::TestDirectory dir;
    const RecordIdentity identity{42, "batch", "n1", 0};
    const auto path = record_path(dir.path().string(), identity);
    EXPECT_EQ(path, dir.path().string() + "/job-42/batch.n1.json");
    ASSERT_TRUE(write_file_atomically(path, "{}\n").ok());
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    EXPECT_EQ(text.str(), "{}\n");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "job-42"),
                            std::filesystem::directory_iterator{}),
              1);  // no temporary left behind
    const auto refused = write_file_atomically("/proc/zeus-no/job-1/x.json", "{}");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().describe().find("/proc/zeus-no/job-1"), std::string::npos);
}

TEST(SlurmTaskStderrRelay, ATaskHandsItsStderrToTheParentWhichWritesTheLineThere) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    TaskStderrRelay relay;
    ASSERT_TRUE(relay.open());
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(pipe_fds[1], STDERR_FILENO);
        relay.send_from_task(7);
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ::close(pipe_fds[1]);
    EXPECT_EQ(relay.take(3), -1);  // a task that sent nothing
    const int task_stderr = relay.take(7);
    ASSERT_GE(task_stderr, 0);
    write_line(task_stderr, "zeus: a line\n");
    ::close(task_stderr);
    relay.close_all();
    char buffer[64] = {};
    const auto n = ::read(pipe_fds[0], buffer, sizeof buffer);
    ::close(pipe_fds[0]);
    EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0), "zeus: a line\n");
}

}  // namespace
}  // namespace zeus::slurm
