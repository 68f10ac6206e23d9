// Processes on the simulated GPUs: loads attributed to PIDs, NVML's process
// calls answering from them, concurrent and time-sliced sharing, and each
// process's ground-truth energy. simple_gpu_config: idle 50 W, 300 W of
// dynamic power at full utilization, no leakage, virtual clock, so the truths
// below are computed by hand from the model in sim/src/processes.h.
#include <map>
#include <vector>

#include "nvml_fixture.h"

namespace zeus::sim::testing {
namespace {

using SimProcesses = NvmlFixture;

double process_energy(unsigned gpu, int pid) {
  double joules = -1;
  EXPECT_EQ(zeusSimProcessEnergy(gpu, pid, &joules), ZEUS_SIM_OK) << zeusSimLastError();
  return joules;
}

int begin(unsigned gpu, double utilization, int pid, double weight) {
  int id = 0;
  EXPECT_EQ(zeusSimProcessLoadBegin(gpu, utilization, pid, weight, &id), ZEUS_SIM_OK) << zeusSimLastError();
  return id;
}

std::vector<nvmlProcessInfo_t> running(nvmlDevice_t device) {
  unsigned count = 0;
  nvmlReturn_t rc = nvmlDeviceGetComputeRunningProcesses_v3(device, &count, nullptr);
  if (rc == NVML_SUCCESS) {
    EXPECT_EQ(count, 0u);
    return {};
  }
  EXPECT_EQ(rc, NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessInfo_t> infos(count);
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device, &count, infos.data()), NVML_SUCCESS);
  infos.resize(count);
  return infos;
}

std::vector<nvmlProcessUtilizationSample_t> samples(nvmlDevice_t device, unsigned long long last_seen) {
  unsigned count = 0;
  const nvmlReturn_t rc = nvmlDeviceGetProcessUtilization(device, nullptr, &count, last_seen);
  if (rc == NVML_ERROR_NOT_FOUND) return {};
  EXPECT_EQ(rc, NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessUtilizationSample_t> out(count);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device, out.data(), &count, last_seen), NVML_SUCCESS);
  out.resize(count);
  return out;
}

// pid -> mean smUtil of its samples, and the sample count.
std::map<unsigned, std::pair<double, unsigned>> mean_util(const std::vector<nvmlProcessUtilizationSample_t>& all) {
  std::map<unsigned, std::pair<double, unsigned>> out;
  for (const auto& s : all) {
    out[s.pid].first += s.smUtil;
    ++out[s.pid].second;
  }
  for (auto& [pid, v] : out) v.first /= v.second;
  return out;
}

TEST_F(SimProcesses, ConcurrentLoadsAddUpAndEachProcessKeepsItsOwnEnergy) {
  init(simple_gpu_config());
  EXPECT_TRUE(running(device(0)).empty());
  const double before = ground_truth(0);
  begin(0, 0.5, 101, 1.0);
  begin(0, 0.25, 202, 2.0);
  // 50 W idle + 300 W × (0.5 × 1 + 0.25 × 2).
  EXPECT_NEAR(true_power(0), 350.0, 1e-9);
  advance(10);
  EXPECT_NEAR(process_energy(0, 101), 300 * 0.5 * 10, 1e-6);
  EXPECT_NEAR(process_energy(0, 202), 300 * 0.25 * 2 * 10, 1e-6);
  EXPECT_NEAR(ground_truth(0) - before, 50 * 10 + 1500 + 1500, 1e-6);

  const auto procs = running(device(0));
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, 101u);
  EXPECT_EQ(procs[1].pid, 202u);
  EXPECT_EQ(procs[0].gpuInstanceId, 0xFFFFFFFFu);

  const auto util = mean_util(samples(device(0), 0));
  ASSERT_EQ(util.size(), 2u);
  EXPECT_NEAR(util.at(101).first, 50, 0.5);
  EXPECT_NEAR(util.at(202).first, 25, 0.5);
  // A sample every 1/6 s: 60 in 10 s (the ring holds the last 256).
  EXPECT_NEAR(util.at(101).second, 60, 1);
}

TEST_F(SimProcesses, TimeSlicedProcessesRunInTurnsAtTheirOwnPower) {
  init(simple_gpu_config());
  ASSERT_EQ(zeusSimSetSharing(0, "time_sliced"), ZEUS_SIM_OK) << zeusSimLastError();
  begin(0, 1.0, 7, 1.0);
  begin(0, 1.0, 8, 0.5);
  // Each runs half the time: 50 W + 300 W × (0.5 × 1 + 0.5 × 0.5).
  EXPECT_NEAR(true_power(0), 275.0, 1e-9);
  advance(10);
  EXPECT_NEAR(process_energy(0, 7), 300 * 0.5 * 10, 1e-6);
  EXPECT_NEAR(process_energy(0, 8), 300 * 0.5 * 0.5 * 10, 1e-6);
  const auto util = mean_util(samples(device(0), 0));
  EXPECT_NEAR(util.at(7).first, 50, 0.5);
  EXPECT_NEAR(util.at(8).first, 50, 0.5);
}

TEST_F(SimProcesses, OnlySamplesNewerThanLastSeenAreReturned) {
  init(simple_gpu_config());
  begin(0, 1.0, 5, 1.0);
  advance(2);
  const auto first = samples(device(0), 0);
  ASSERT_FALSE(first.empty());
  unsigned long long last_seen = 0;
  for (const auto& s : first) last_seen = std::max(last_seen, s.timeStamp);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device(0), nullptr, &count, last_seen), NVML_ERROR_NOT_FOUND);
  advance(1);
  const auto next = samples(device(0), last_seen);
  EXPECT_NEAR(next.size(), 6, 1);
  for (const auto& s : next) EXPECT_GT(s.timeStamp, last_seen);
}

TEST_F(SimProcesses, AnEndedProcessKeepsItsTruthAndLeavesTheList) {
  init(simple_gpu_config());
  const int id = begin(0, 1.0, 9, 1.0);
  advance(1);
  ASSERT_EQ(zeusSimLoadEnd(id), ZEUS_SIM_OK);
  advance(5);
  EXPECT_NEAR(process_energy(0, 9), 300.0, 1e-6);
  EXPECT_TRUE(running(device(0)).empty());
  EXPECT_EQ(process_energy(0, 12345), 0.0);
}

TEST_F(SimProcesses, ACallerWithoutAPidOwnsItsLoad) {
  init(simple_gpu_config());
  begin(0, 0.5, 0, 1.0);
  const auto procs = running(device(0));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, static_cast<unsigned>(::getpid()));
}

TEST_F(SimProcesses, BadInputsAreRefusedWithTheReason) {
  init(simple_gpu_config());
  int id = 0;
  EXPECT_EQ(zeusSimProcessLoadBegin(0, 0.5, 1, 0.0, &id), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zeusSimLastError()).find("power_weight"), std::string::npos);
  EXPECT_EQ(zeusSimProcessLoadBegin(0, 0.5, -3, 1.0, &id), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(zeusSimSetSharing(0, "mps"), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zeusSimLastError()).find("time_sliced"), std::string::npos);
  EXPECT_EQ(zeusSimSetSharing(0, nullptr), ZEUS_SIM_ERROR_INVALID_ARGUMENT);
  unsigned count = 0;
  EXPECT_EQ(nvmlDeviceGetComputeRunningProcesses_v3(device(0), nullptr, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device(0), nullptr, nullptr, 0), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvmlDeviceGetProcessUtilization(device(0), nullptr, &count, 0), NVML_ERROR_NOT_FOUND);
}

}  // namespace
}  // namespace zeus::sim::testing
