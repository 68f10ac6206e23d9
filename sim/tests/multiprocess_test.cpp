// Several processes sharing one simulator state file, as a workload, a
// monitor and a daemon would.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "nvml_fixture.h"
#include "support/build_paths.hpp"

namespace zeus::sim::testing {
namespace {

using SimMultiProcess = NvmlFixture;

// Runs `zeus-sim status --format json` in a separate process (fork + exec).
nlohmann::json cli_status() {
  FILE* pipe = popen((zeus::testing::zeus_sim_cli_path() + " status --format json").c_str(), "r");
  if (!pipe) return {};
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  pclose(pipe);
  return nlohmann::json::parse(out, nullptr, false);
}

// A forked child that holds a full load on GPU 0 until killed.
pid_t spawn_loader(int& load_id) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    // The child inherited the parent's open simulator and uses it directly.
    int id = -1;
    if (zeusSimLoadBegin(0, 1.0, &id) != ZEUS_SIM_OK) _exit(2);
    if (write(fds[1], &id, sizeof id) != static_cast<ssize_t>(sizeof id)) _exit(3);
    for (;;) pause();
  }
  close(fds[1]);
  if (read(fds[0], &load_id, sizeof load_id) != static_cast<ssize_t>(sizeof load_id)) load_id = -1;
  close(fds[0]);
  return pid;
}

TEST_F(SimMultiProcess, ProcessesShareEnergyAndLoadsAndDeadLoadersDisappear) {
  init(simple_gpu_config(), /*shared_state=*/true);
  int load_id = -1;
  const pid_t loader = spawn_loader(load_id);
  ASSERT_GT(loader, 0);
  ASSERT_GT(load_id, 0) << "the child could not start its load";

  EXPECT_NEAR(true_power(0), 50 + 300, 1e-9) << "the parent sees the child's load";
  advance(5);
  const double energy = ground_truth(0);
  EXPECT_NEAR(energy, 350 * 5, 1e-6);

  const nlohmann::json status = cli_status();
  ASSERT_TRUE(status.is_object()) << "zeus-sim status failed";
  EXPECT_DOUBLE_EQ(status["gpus"][0]["ground_truth_energy_j"].get<double>(), energy);
  EXPECT_EQ(status["gpus"][0]["active_loads"].get<unsigned>(), 1u);
  EXPECT_EQ(status["gpus"][0]["energy_counter_mj"].get<unsigned long long>(), energy_counter(device(0)));

  // kill -9: the load must stop although nobody called zeusSimLoadEnd.
  ASSERT_EQ(kill(loader, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(loader, &wstatus, 0), loader);
  EXPECT_NEAR(true_power(0), 50, 1e-9);
  EXPECT_EQ(zeusSimLoadEnd(load_id), ZEUS_SIM_ERROR_NOT_FOUND) << "the dead loader's slot is gone";
  EXPECT_EQ(cli_status()["gpus"][0]["active_loads"].get<unsigned>(), 0u);
}

TEST_F(SimMultiProcess, AnotherConfigurationReinitialisesTheState) {
  init(simple_gpu_config(), /*shared_state=*/true);
  advance(3);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // Same state file, same config: the state (and its clock) survives.
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  double now = 0;
  ASSERT_EQ(zeusSimNow(&now), ZEUS_SIM_OK);
  EXPECT_DOUBLE_EQ(now, 3.0);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // A different config: fresh state.
  config_env_.reset();
  config_env_ = std::make_unique<ScopedEnv>(
      "ZEUS_SIM_CONFIG", dir_.write("other.json", R"({"clock": "virtual", "gpus": [{"model": "A40", "count": 3}]})"));
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  unsigned count = 0;
  ASSERT_EQ(nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 3u);
  ASSERT_EQ(zeusSimNow(&now), ZEUS_SIM_OK);
  EXPECT_DOUBLE_EQ(now, 0.0);
}

TEST_F(SimMultiProcess, ConcurrentFirstOpensAgreeOnOneState) {
  use_config(simple_gpu_config(), /*shared_state=*/true);
  constexpr int kChildren = 4;
  pid_t children[kChildren];
  for (pid_t& child : children) {
    child = fork();
    if (child == 0) {
      // Each child opens the not-yet-existing state at the same time and adds 1 s.
      if (zeusSimOpen() != ZEUS_SIM_OK || zeusSimAdvance(1.0) != ZEUS_SIM_OK) _exit(2);
      _exit(zeusSimClose() == ZEUS_SIM_OK ? 0 : 3);
    }
  }
  for (pid_t child : children) {
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
    EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  }
  ASSERT_EQ(zeusSimOpen(), ZEUS_SIM_OK);
  double now = 0;
  ASSERT_EQ(zeusSimNow(&now), ZEUS_SIM_OK);
  EXPECT_DOUBLE_EQ(now, kChildren * 1.0) << "no child re-initialised another's state";
}

}  // namespace
}  // namespace zeus::sim::testing
