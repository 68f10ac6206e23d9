// Running overrides with real processes: argv and placeholders, sequencing,
// every way a command can fail, timeouts, leftover children, concurrency and
// the child's environment (descriptors, signals, stdin).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "test_files.hpp"
#include "zeusd/overrides/command_overrides.hpp"

namespace zeus::zeusd {
namespace {

using Clock = std::chrono::steady_clock;
using testing::file_exists;
using testing::read_file;
using testing::TempDir;
using testing::write_script;

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// Overrides from `toml`, which must load.
CommandOverrides load(const TempDir& dir, const std::string& toml) {
    auto loaded = testing::load_text(dir, toml);
    if (!loaded.ok()) ADD_FAILURE() << loaded.error().describe();
    return loaded.ok() ? std::move(loaded).value() : CommandOverrides();
}

// A reset_locked_clocks override running `commands` (TOML array items).
CommandOverrides reset_override(const TempDir& dir, const std::string& commands, const std::string& extra = "") {
    return load(dir, "[reset_locked_clocks]\ncommands = [" + commands + "]\n" + extra);
}

Status run_reset(const CommandOverrides& overrides, unsigned gpu_id = 0) {
    CommandArguments arguments;
    arguments.gpu_id = gpu_id;
    return overrides.run(GpuCommand::ResetLockedClocks, arguments);
}

// A script that appends its arguments, one per line, to `record`.
std::string recorder(const TempDir& dir, const std::string& name, const std::string& record) {
    return write_script(dir, name, "printf '%s\\n' \"$@\" >> '" + record + "'");
}

std::string seconds_since(Clock::time_point start) {
    return std::to_string(std::chrono::duration<double>(Clock::now() - start).count()) + " s";
}

TEST(OverridesRun, SubstitutesPlaceholdersIntoTheArgv) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides = load(dir, "[set_power_limit]\ncommands = ['" + tool +
                                         " -i {gpu_id} --mw={power_limit_mw} \"{power_limit_w} W\" {power_limit_w}']\n"
                                         "[set_gpu_locked_clocks]\ncommands = ['" + tool +
                                         " {min_clock_mhz},{max_clock_mhz} gpu{gpu_id}']\n"
                                         "[set_persistence_mode]\ncommands = ['" + tool + " pm={enabled}']\n");
    CommandArguments power;
    power.gpu_id = 3;
    power.power_limit_mw = 253'999;
    ASSERT_TRUE(overrides.run(GpuCommand::SetPowerLimit, power).ok());
    EXPECT_EQ(read_file(record), "-i\n3\n--mw=253999\n253 W\n253\n");

    CommandArguments clocks;
    clocks.gpu_id = 1;
    clocks.min_clock_mhz = 500;
    clocks.max_clock_mhz = 1700;
    ASSERT_TRUE(overrides.run(GpuCommand::SetGpuLockedClocks, clocks).ok());
    CommandArguments persistence;
    persistence.enabled = false;
    ASSERT_TRUE(overrides.run(GpuCommand::SetPersistenceMode, persistence).ok());
    persistence.enabled = true;
    ASSERT_TRUE(overrides.run(GpuCommand::SetPersistenceMode, persistence).ok());
    EXPECT_EQ(read_file(record), "-i\n3\n--mw=253999\n253 W\n253\n500,1700\ngpu1\npm=0\npm=1\n");
}

TEST(OverridesRun, ArgumentsAreNotInterpretedByAShell) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides = reset_override(dir, "'" + tool + " \"$HOME\" ; *  `id` \\|'");
    ASSERT_TRUE(run_reset(overrides).ok());
    EXPECT_EQ(read_file(record), "$HOME\n;\n*\n`id`\n|\n");
}

TEST(OverridesRun, FindsProgramsInPath) {
    const TempDir dir;
    const auto overrides = reset_override(dir, "'true', 'sh -c \"exit 0\"'");
    const auto status = run_reset(overrides);
    EXPECT_TRUE(status.ok()) << status.error().describe();
}

TEST(OverridesRun, RunsCommandsInOrder) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides = reset_override(dir, "'" + tool + " first {gpu_id}', '" + tool + " second {gpu_id}'");
    ASSERT_TRUE(run_reset(overrides, 2).ok());
    EXPECT_EQ(read_file(record), "first\n2\nsecond\n2\n");
}

TEST(OverridesRun, StopsAtTheFirstFailure) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides = reset_override(dir, "'" + tool + " one', 'false', '" + tool + " three'");
    const auto status = run_reset(overrides);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::OperatingSystem);
    EXPECT_CONTAINS(status.error().message, "reset_locked_clocks override: command 'false' exited with code 1");
    EXPECT_EQ(read_file(record), "one\n");
}

TEST(OverridesRun, NonZeroExitReportsCodeAndOutput) {
    const TempDir dir;
    const auto script =
        write_script(dir, "fail.sh", "echo standard-output\necho standard-error >&2\nexit 7");
    const auto status = run_reset(reset_override(dir, "'" + script + " --gpu {gpu_id}'"), 5);
    ASSERT_FALSE(status.ok());
    const auto& message = status.error().message;
    EXPECT_CONTAINS(message, "command '" + script + " --gpu 5' exited with code 7");
    EXPECT_CONTAINS(message, "stdout: standard-output");
    EXPECT_CONTAINS(message, "stderr: standard-error");
}

TEST(OverridesRun, ErrorMessageQuotesOnlyTheTailOfLongOutput) {
    const TempDir dir;
    const auto script = write_script(dir, "chatty.sh", "seq 1 100000\necho the-end\nexit 3");
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    ASSERT_FALSE(status.ok());
    const auto& message = status.error().message;
    EXPECT_CONTAINS(message, "exited with code 3");
    EXPECT_CONTAINS(message, "99999\n100000\nthe-end; stderr: <empty>");
    EXPECT_CONTAINS(message, "stdout: ...");
    EXPECT_LT(message.size(), 2500U);
}

TEST(OverridesRun, InvalidUtf8OutputIsReplaced) {
    const TempDir dir;
    const auto script = write_script(dir, "binary.sh", "printf 'bad \\377\\376 byte'\nexit 1");
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    ASSERT_FALSE(status.ok());
    EXPECT_CONTAINS(status.error().message, "stdout: bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
}

TEST(OverridesRun, SpawnFailureIsReported) {
    const TempDir dir;
    const auto missing = dir.file("no-such-tool");
    const auto status = run_reset(reset_override(dir, "'" + missing + " {gpu_id}'"));
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::OperatingSystem);
    EXPECT_CONTAINS(status.error().message, "command '" + missing + " 0' could not be spawned: No such file");

    const auto not_executable = dir.file("data.txt");
    testing::write_file(not_executable, "text", 0644);
    const auto denied = run_reset(reset_override(dir, "'" + not_executable + "'"));
    ASSERT_FALSE(denied.ok());
    EXPECT_CONTAINS(denied.error().message, "could not be spawned: Permission denied");
}

TEST(OverridesRun, DeathBySignalIsAFailure) {
    const TempDir dir;
    const auto script = write_script(dir, "suicide.sh", "kill -TERM $$");
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    ASSERT_FALSE(status.ok());
    EXPECT_CONTAINS(status.error().message, "was killed by signal 15 (SIGTERM)");
}

TEST(OverridesRun, ErrorPatternFailsASuccessfulCommand) {
    const TempDir dir;
    const auto on_stdout = write_script(dir, "out.sh", "echo 'Setting power limit: FAILED (not supported)'");
    const auto on_stderr = write_script(dir, "err.sh", "echo 'warning: ERROR 42' >&2");
    const auto clean = write_script(dir, "clean.sh", "echo 'all good'");
    const std::string pattern = "error_pattern = '(?i)failed|error'\n";

    for (const auto& script : {on_stdout, on_stderr}) {
        const auto status = run_reset(reset_override(dir, "'" + script + "'", pattern));
        ASSERT_FALSE(status.ok()) << script;
        EXPECT_EQ(status.error().code, ErrorCode::OperatingSystem);
        EXPECT_CONTAINS(status.error().message, "succeeded but its output matched error_pattern '(?i)failed|error'");
    }
    EXPECT_CONTAINS(run_reset(reset_override(dir, "'" + on_stderr + "'", pattern)).error().message,
                    "stderr: warning: ERROR 42");
    EXPECT_TRUE(run_reset(reset_override(dir, "'" + clean + "'", pattern)).ok());
    // Case matters without (?i).
    EXPECT_TRUE(run_reset(reset_override(dir, "'" + on_stdout + "'", "error_pattern = 'failed'\n")).ok());
}

TEST(OverridesRun, ErrorPatternStopsTheSequence) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides =
        reset_override(dir, "'" + tool + " one', 'echo Error: GPU busy', '" + tool + " three'",
                       "error_pattern = 'Error:'\n");
    ASSERT_FALSE(run_reset(overrides).ok());
    EXPECT_EQ(read_file(record), "one\n");
}

TEST(OverridesRun, GreedyErrorPatternOnLongOutputDoesNotOverflowTheStack) {
    const TempDir dir;
    // One 200 KB line: libstdc++'s regex recursion per character would
    // overflow an 8 MiB stack on the full text.
    const auto script = write_script(dir, "long.sh", "head -c 200000 /dev/zero | tr '\\0' a\necho ' failed'");
    const auto status = run_reset(reset_override(dir, "'" + script + "'", "error_pattern = '(a|b)*.*failed'\n"));
    ASSERT_FALSE(status.ok());
    EXPECT_CONTAINS(status.error().message, "matched error_pattern");
}

TEST(OverridesRun, TimeoutKillsTheWholeProcessGroup) {
    const TempDir dir;
    const auto pids = dir.file("pids");
    // The script starts a background sleeper, records both pids, then waits.
    const auto script =
        write_script(dir, "hang.sh", "sleep 30 &\necho $$ $! > '" + pids + "'\necho started\nwait");
    const auto start = Clock::now();
    const auto status = run_reset(reset_override(dir, "'" + script + "'", "timeout_s = 1\n"));
    const auto elapsed = Clock::now() - start;
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::Timeout);
    EXPECT_CONTAINS(status.error().message, "timed out after 1s");
    EXPECT_CONTAINS(status.error().message, "stdout: started");
    EXPECT_GE(elapsed, std::chrono::milliseconds(950));
    EXPECT_LT(elapsed, std::chrono::seconds(4)) << seconds_since(start);

    pid_t shell = 0;
    pid_t sleeper = 0;
    ASSERT_EQ(std::sscanf(read_file(pids).c_str(), "%d %d", &shell, &sleeper), 2);
    EXPECT_TRUE(testing::process_gone(shell));
    // The grandchild dies with the group; allow its parent a moment to reap it.
    const auto give_up = Clock::now() + std::chrono::seconds(2);
    while (!testing::process_gone(sleeper) && Clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(testing::process_gone(sleeper)) << "pid " << sleeper;
}

TEST(OverridesRun, LeftoverChildHoldingThePipesDelaysAtMostTheGrace) {
    const TempDir dir;
    // setsid puts the sleeper outside the command's group, so nothing kills it.
    const auto script = write_script(dir, "linger.sh", "setsid sleep 3 &\necho done");
    const auto start = Clock::now();
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    EXPECT_TRUE(status.ok()) << status.error().describe();
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(2500)) << seconds_since(start);

    // With an error_pattern the incomplete output cannot be trusted.
    const auto checked = run_reset(reset_override(dir, "'" + script + "'", "error_pattern = 'never'\n"));
    ASSERT_FALSE(checked.ok());
    EXPECT_CONTAINS(checked.error().message, "output could not be collected, so error_pattern could not be checked");
    EXPECT_CONTAINS(checked.error().message, "still open");
}

TEST(OverridesRun, ConcurrentRunsForDifferentGpus) {
    const TempDir dir;
    const auto script = write_script(dir, "slow.sh", "sleep 0.3\necho \"$1\" > \"" + dir.path() + "/gpu-$1\"");
    const auto overrides = reset_override(dir, "'" + script + " {gpu_id}'");
    constexpr unsigned kGpus = 8;
    std::vector<std::thread> threads;
    std::vector<int> ok(kGpus, 0);
    const auto start = Clock::now();
    for (unsigned gpu = 0; gpu < kGpus; ++gpu) {
        threads.emplace_back([&, gpu] { ok[gpu] = run_reset(overrides, gpu).ok() ? 1 : 0; });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(8 * 300)) << "ran one at a time";
    for (unsigned gpu = 0; gpu < kGpus; ++gpu) {
        EXPECT_EQ(ok[gpu], 1) << gpu;
        EXPECT_EQ(read_file(dir.path() + "/gpu-" + std::to_string(gpu)), std::to_string(gpu) + "\n");
    }
}

TEST(OverridesRun, ChildGetsNoInheritedDescriptorsAndNullStdin) {
    const TempDir dir;
    // A descriptor some other part of the daemon opened without O_CLOEXEC.
    const int leaky = ::open("/dev/null", O_RDONLY);
    ASSERT_GE(leaky, 3);
    const auto record = dir.file("fds");
    const auto script = write_script(dir, "fds.sh",
                                     "ls /proc/$$/fd > '" + record + "'\nreadlink /proc/$$/fd/0 >> '" + record + "'");
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    ::close(leaky);
    ASSERT_TRUE(status.ok()) << status.error().describe();
    // 0, 1, 2, and the descriptor the shell itself holds on the script.
    const auto listing = read_file(record);
    EXPECT_EQ(listing.find("\n" + std::to_string(leaky) + "\n"), std::string::npos) << listing;
    EXPECT_CONTAINS(listing, "/dev/null");
}

TEST(OverridesRun, ChildGetsDefaultSignalsDespiteTheDaemonsSettings) {
    const TempDir dir;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction previous {};
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);
    const auto record = dir.file("status");
    const auto script = write_script(dir, "signals.sh", "grep -E '^Sig(Ign|Blk)' /proc/$$/status > '" + record + "'");
    const auto status = run_reset(reset_override(dir, "'" + script + "'"));
    ::sigaction(SIGPIPE, &previous, nullptr);
    ASSERT_TRUE(status.ok()) << status.error().describe();
    // SIGPIPE (bit 13) must not be ignored in the child. The shell may ignore
    // others itself, so only that bit is checked.
    const auto text = read_file(record);
    const auto ign = text.find("SigIgn:");
    ASSERT_NE(ign, std::string::npos) << text;
    const auto mask = std::stoull(text.substr(ign + 7), nullptr, 16);
    EXPECT_EQ(mask & (1ULL << (SIGPIPE - 1)), 0U) << text;
}

volatile sig_atomic_t g_sigchld_count = 0;
void count_sigchld(int /*signal*/) { g_sigchld_count = g_sigchld_count + 1; }

TEST(OverridesRun, DaemonsSigchldHandlerDoesNotDisturbRuns) {
    const TempDir dir;
    struct sigaction handler {};
    handler.sa_handler = count_sigchld;  // no SA_RESTART: syscalls see EINTR
    struct sigaction previous {};
    ASSERT_EQ(::sigaction(SIGCHLD, &handler, &previous), 0);
    const auto script = write_script(dir, "quick.sh", "sleep 0.1\nexit 4");
    const auto failing = run_reset(reset_override(dir, "'" + script + "'"));
    const auto passing = run_reset(reset_override(dir, "'true', 'true'"));
    ::sigaction(SIGCHLD, &previous, nullptr);
    ASSERT_FALSE(failing.ok());
    EXPECT_CONTAINS(failing.error().message, "exited with code 4");
    EXPECT_TRUE(passing.ok()) << passing.error().describe();
    EXPECT_GE(g_sigchld_count, 1);
}

TEST(OverridesRun, MissingArgumentFailsBeforeAnythingRuns) {
    const TempDir dir;
    const auto record = dir.file("record");
    const auto tool = recorder(dir, "tool.sh", record);
    const auto overrides =
        load(dir, "[set_power_limit]\ncommands = ['" + tool + " {gpu_id}', '" + tool + " {power_limit_w}']\n");
    CommandArguments arguments;  // no power_limit_mw
    const auto status = overrides.run(GpuCommand::SetPowerLimit, arguments);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::InvalidArgument);
    EXPECT_CONTAINS(status.error().message, "{power_limit_w}");
    EXPECT_FALSE(file_exists(record));
}

TEST(OverridesRun, CommandThatIsNotOverriddenIsNotFound) {
    const TempDir dir;
    const auto overrides = reset_override(dir, "'true'");
    const auto status = overrides.run(GpuCommand::SetPowerLimit, CommandArguments{});
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace zeus::zeusd
