// A shared state file that a live process uses must never be re-initialised by
// a process with another configuration (it would wipe the first one's GPUs
// under its feet), also when the first process has forked.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "nvml_fixture.h"
#include "support/build_paths.hpp"

namespace zeus::sim::testing {
namespace {

using SimStateAttach = NvmlFixture;

constexpr const char* kInUse = "is in use by another process with a different configuration";
constexpr const char* kOtherConfig = R"({"clock": "virtual", "gpus": [{"model": "A40", "count": 3}]})";

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs zeus-sim (a separate process) on the same state file with another config.
CliResult cli_with_config(const std::string& config_path, const std::string& args) {
  const std::string command =
      "ZEUS_SIM_CONFIG=" + config_path + " " + zeus::testing::zeus_sim_cli_path() + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) result.output += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

double now_s() {
  double now = -1;
  EXPECT_EQ(zeusSimNow(&now), ZEUS_SIM_OK) << zeusSimLastError();
  return now;
}

TEST_F(SimStateAttach, AnotherConfigurationIsRefusedWhileTheStateIsInUse) {
  init(simple_gpu_config(), /*shared_state=*/true);
  advance(3);
  const std::string other = dir_.write("other.json", kOtherConfig);

  const CliResult cli = cli_with_config(other, "status");
  EXPECT_NE(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find(kInUse), std::string::npos) << cli.output;
  EXPECT_NE(cli.output.find(dir_.file("state")), std::string::npos) << "names the file: " << cli.output;

  // The first process's state is intact and keeps working.
  EXPECT_DOUBLE_EQ(now_s(), 3.0);
  unsigned count = 0;
  ASSERT_EQ(zeusSimGpuCount(&count), ZEUS_SIM_OK);
  EXPECT_EQ(count, 1u);
  advance(1);
  EXPECT_DOUBLE_EQ(now_s(), 4.0);
  EXPECT_NEAR(ground_truth(0), 50 * 4.0, 1e-6);
}

TEST_F(SimStateAttach, ForkedChildrenShareTheAttachmentAndNvmlInitReportsTheConflict) {
  init(simple_gpu_config(), /*shared_state=*/true);
  const std::string other = dir_.write("other.json", kOtherConfig);
  const int child = exit_code_in_child(60, [&] {
    // The inherited simulator keeps working in the child ...
    if (zeusSimAdvance(2.0) != ZEUS_SIM_OK) return 2;
    // ... and closing it there must not release the parent's attachment.
    if (nvmlShutdown() != NVML_SUCCESS) return 3;
    setenv("ZEUS_SIM_CONFIG", other.c_str(), 1);
    if (nvmlInit_v2() != NVML_ERROR_UNKNOWN) return 4;
    if (std::string(zeusSimLastError()).find(kInUse) == std::string::npos) return 5;
    if (zeusSimOpen() != ZEUS_SIM_ERROR_STATE) return 6;
    return 0;
  });
  EXPECT_EQ(child, 0);
  EXPECT_DOUBLE_EQ(now_s(), 2.0) << "the child advanced the shared clock";

  // The child has exited and closed its copy of the file: still refused.
  const CliResult cli = cli_with_config(other, "status");
  EXPECT_NE(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find(kInUse), std::string::npos) << cli.output;
  EXPECT_DOUBLE_EQ(now_s(), 2.0);

  // Once nobody uses the file, the other configuration may take it over.
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  const CliResult taken = cli_with_config(other, "status --format json");
  EXPECT_EQ(taken.exit_code, 0) << taken.output;
  EXPECT_NE(taken.output.find("\"index\": 2"), std::string::npos) << taken.output;
}

TEST_F(SimStateAttach, SameConfigurationAttachesNextToALiveProcess) {
  init(simple_gpu_config(), /*shared_state=*/true);
  advance(5);
  const CliResult cli = cli_with_config(dir_.file("config.json"), "advance 1");
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_DOUBLE_EQ(now_s(), 6.0);
}

// A host program started with a standard descriptor closed: the library's
// state file must not take its number, or the program's output would be
// written into the shared state.
TEST_F(SimStateAttach, TheStateFileNeverTakesAClosedStandardDescriptor) {
  const int saved_stdin = ::dup(STDIN_FILENO);
  ASSERT_GE(saved_stdin, 0);
  ::close(STDIN_FILENO);
  init(simple_gpu_config(), /*shared_state=*/true);
  const bool stdin_taken = ::fcntl(STDIN_FILENO, F_GETFD) != -1;
  ::dup2(saved_stdin, STDIN_FILENO);
  ::close(saved_stdin);
  EXPECT_FALSE(stdin_taken) << "the state file was opened as standard input";
  EXPECT_EQ(cli_with_config(dir_.file("config.json"), "advance 1").exit_code, 0);
}

// ZEUS_SIM_STATE pointing at someone's file by mistake: refused, the file untouched.
TEST_F(SimStateAttach, AFileThatIsNotAStateFileIsNeverOverwritten) {
  const std::string notes = "my notes, not a simulator state\n";
  dir_.write("state", notes);
  use_config(simple_gpu_config(), /*shared_state=*/true);
  EXPECT_NE(nvmlInit_v2(), NVML_SUCCESS);
  const std::string error = zeusSimLastError();
  EXPECT_NE(error.find("is not a zeus-sim state file"), std::string::npos) << error;
  EXPECT_NE(error.find(dir_.file("state")), std::string::npos) << error;
  std::FILE* f = std::fopen(dir_.file("state").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buffer[256] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buffer, n), notes);
}

}  // namespace
}  // namespace zeus::sim::testing
