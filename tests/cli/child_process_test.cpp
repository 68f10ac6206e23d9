// The child process of `zeus run` (apps/zeus/child_process.hpp): spawning,
// exit statuses as a shell reports them, and the signal pipe.
#include "child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

TEST(ChildProcess, MissingAndUnexecutableCommandsAreToldApart) {
    auto r = spawn_command({"zeus-no-such-command-xyz"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(spawn_failure_exit_code(r.error()), 127);
    EXPECT_NE(r.error().message.find("command not found"), std::string::npos);
    r = spawn_command({fs::temp_directory_path().string()});  // a directory
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(spawn_failure_exit_code(r.error()), 126) << r.error().message;
    EXPECT_FALSE(spawn_command({}).ok());
}

TEST(ChildProcess, ExitCodesAndSignalsBecomeShellStatuses) {
    auto pid = spawn_command({"sh", "-c", "exit 7"});
    ASSERT_TRUE(pid.ok()) << pid.error().describe();
    int raw = 0;
    ASSERT_EQ(::waitpid(*pid, &raw, 0), *pid);
    auto status = ChildStatus::from_wait_status(raw);
    EXPECT_EQ(status.shell_exit_code(), 7);
    EXPECT_EQ(status.describe(), "exited with code 7");

    pid = spawn_command({"sh", "-c", "kill -TERM $$"});
    ASSERT_TRUE(pid.ok());
    ASSERT_EQ(::waitpid(*pid, &raw, 0), *pid);
    status = ChildStatus::from_wait_status(raw);
    EXPECT_EQ(status.shell_exit_code(), 128 + SIGTERM);
    EXPECT_EQ(status.describe(), "killed by signal 15 (SIGTERM)");
    EXPECT_EQ(signal_name(64), "signal 64");
}

TEST(ChildProcess, SignalPipeReportsSignalsAndWhoSentThem) {
    auto pipe = SignalPipe::install({SIGTERM, SIGCHLD});
    ASSERT_TRUE(pipe.ok()) << pipe.error().describe();
    EXPECT_FALSE(SignalPipe::install({SIGINT}).ok());  // one at a time
    EXPECT_TRUE((*pipe)->wait(std::chrono::milliseconds(0)).empty());
    ::kill(::getpid(), SIGTERM);
    const auto got = (*pipe)->wait(std::chrono::seconds(5));
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].signal, SIGTERM);
    EXPECT_TRUE(got[0].from_process);
    // A child's exit wakes the wait too, and the child does not inherit the handler.
    auto pid = spawn_command({"sh", "-c", "kill -TERM $$"});
    ASSERT_TRUE(pid.ok());
    const auto start = Clock::now();
    std::vector<ReceivedSignal> chld;
    while (chld.empty() && Clock::now() - start < std::chrono::seconds(5)) chld = (*pipe)->wait(std::chrono::seconds(1));
    ASSERT_FALSE(chld.empty());
    EXPECT_EQ(chld[0].signal, SIGCHLD);
    int raw = 0;
    ASSERT_EQ(::waitpid(*pid, &raw, 0), *pid);
    EXPECT_EQ(ChildStatus::from_wait_status(raw).shell_exit_code(), 128 + SIGTERM);
}

}  // namespace
}  // namespace zeus::cli
