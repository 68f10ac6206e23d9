// The programs at the edges of a process (docs/cli.md, "Signals" and
// "Closed standard descriptors"): every terminating signal stops `zeus run`
// with a report and no command left behind (and `zeus power`/`energy` with
// their summary); Ctrl-C on a terminal reaches a command that left zeus's
// process group; standard descriptors that were closed are never reused for
// a file (the simulator's shared state stays intact) in zeus, zeusd and
// zeus-sim; a report on a pipe nobody reads is an error with the command's
// exit code; outputs naming one file are refused and an earlier report is
// never truncated before a new one is there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "device/cpu/fake_powercap.hpp"
#include "support/build_paths.hpp"
#include "support/command_output.hpp"

extern char** environ;

namespace zeus::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// What a standard descriptor of a started program is.
enum class Stream { kClosed, kToFile };

struct Started {
    pid_t pid = -1;
    int exit_code = -1;  // after wait(): the exit code, -1 when a signal killed it
    int killed_by = 0;
};

class ProcessEdges : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-edges-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        powercap_.add_zone(0, "package-0", 1'000'000, 262'143'328'850);
        env_ =
            "env -u ZEUS_SIMULATE -u CUDA_VISIBLE_DEVICES -u ZEUS_NVML_LIBRARY -u ZEUS_JETSON_SYSFS_ROOT "
            "ZEUS_SIM_STATE=" +
            state().string() + " ZEUS_POWERCAP_ROOT=" + powercap_.root().string() + " ";
    }
    void TearDown() override {
        for (pid_t pid : to_kill_) ::kill(pid, SIGKILL);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    [[nodiscard]] fs::path state() const { return dir_ / "state"; }
    [[nodiscard]] static std::string zeus() { return zeus_cli_path(); }

    // The environment of a started program: this test's simulator state and RAPL tree.
    [[nodiscard]] std::vector<std::string> environment() const {
        std::vector<std::string> env = {"ZEUS_SIM_STATE=" + state().string(),
                                        "ZEUS_POWERCAP_ROOT=" + powercap_.root().string(),
                                        "ZEUS_SIM_LIBRARY=" + sim_nvml_library_path()};
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string entry(*e);
            const std::string name = entry.substr(0, entry.find('='));
            if (name == "ZEUS_SIM_STATE" || name == "ZEUS_POWERCAP_ROOT" || name == "ZEUS_SIMULATE" ||
                name == "ZEUS_SIM_LIBRARY" || name == "CUDA_VISIBLE_DEVICES" || name == "ZEUS_NVML_LIBRARY" ||
                name == "ZEUS_JETSON_SYSFS_ROOT") {
                continue;
            }
            env.push_back(entry);
        }
        return env;
    }

    // Starts `argv` without a shell (so that a signal reaches the program
    // itself), standard input from /dev/null unless closed, standard output
    // and error to dir/stdout and dir/stderr unless closed.
    Started start(std::vector<std::string> argv, Stream in = Stream::kToFile, Stream out = Stream::kToFile,
                  Stream err = Stream::kToFile, const std::vector<std::string>& extra_env = {}) {
        // Everything is prepared before fork: the child only calls async-signal-safe functions.
        auto env_strings = environment();
        env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
        std::vector<char*> envp;
        for (auto& e : env_strings) envp.push_back(e.data());
        envp.push_back(nullptr);
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        const std::string out_path = (dir_ / "stdout").string();
        const std::string err_path = (dir_ / "stderr").string();
        Started s;
        s.pid = ::fork();
        if (s.pid != 0) {
            to_kill_.push_back(s.pid);
            return s;
        }
        const int null = ::open("/dev/null", O_RDONLY);
        const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(null, STDIN_FILENO);
        ::dup2(o, STDOUT_FILENO);
        ::dup2(e, STDERR_FILENO);
        ::close(null);
        ::close(o);
        ::close(e);
        if (ignore_hangup_) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            ::sigaction(SIGHUP, &ignore, nullptr);  // as nohup does
        }
        if (in == Stream::kClosed) ::close(STDIN_FILENO);
        if (out == Stream::kClosed) ::close(STDOUT_FILENO);
        if (err == Stream::kClosed) ::close(STDERR_FILENO);
        ::execve(args[0], args.data(), envp.data());
        ::_exit(99);
    }

    static void wait(Started& s) {
        int raw = 0;
        ::waitpid(s.pid, &raw, 0);
        s.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        s.killed_by = WIFSIGNALED(raw) ? WTERMSIG(raw) : 0;
    }

    [[nodiscard]] std::string output() const { return read_file(dir_ / "stdout") + read_file(dir_ / "stderr"); }

    // The pid a command wrote to `file`, once it is there (up to 20 s).
    [[nodiscard]] static pid_t wait_for_pid_file(const fs::path& file) {
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (Clock::now() < deadline) {
            const auto text = read_file(file);
            if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return -1;
    }

    static bool wait_for_text(const fs::path& file, const std::string& text) {
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (Clock::now() < deadline) {
            if (read_file(file).find(text) != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    // Waits until a running process handles SIGTERM (a server, once it serves; up to 20 s).
    static bool wait_until_catching_sigterm(pid_t pid) {
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (Clock::now() < deadline) {
            std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
            for (std::string line; std::getline(status, line);) {
                if (!line.starts_with("SigCgt:")) continue;
                const auto caught = std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
                if ((caught >> (SIGTERM - 1)) & 1U) return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    // A process that no longer exists (reaped, not a zombie either).
    static bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

    // The file behind descriptor `fd` of a running process.
    static std::string descriptor_target(pid_t pid, int fd) {
        std::error_code ec;
        return fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec).string();
    }

    // Waits until a running process has the simulator's state open (up to 20 s).
    bool wait_until_state_open(pid_t pid) const {
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
        while (Clock::now() < deadline) {
            std::error_code ec;
            for (const auto& entry : fs::directory_iterator(fds, ec)) {
                std::error_code link_ec;
                if (fs::read_symlink(entry.path(), link_ec) == state()) return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    // The simulator's state holds none of the text a program printed.
    void expect_state_free_of(const std::vector<std::string>& printed, const std::string& what) const {
        const auto bytes = read_file(state());
        ASSERT_FALSE(bytes.empty()) << what << ": no state file";
        for (const auto& text : printed) {
            EXPECT_EQ(bytes.find(text), std::string::npos)
                << what << " wrote '" << text << "' into the simulator state";
        }
        EXPECT_EQ(capture_separately(env_ + zeus_sim_cli_path() + " status --format json").exit_code, 0) << what;
    }

    FakePowercap powercap_;
    fs::path dir_;
    std::string env_;
    std::vector<pid_t> to_kill_;
    bool ignore_hangup_ = false;
};

constexpr std::array kTerminatingSignals{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE};

std::string name_of(int signal) { return std::string("SIG") + sigabbrev_np(signal); }

// Runs a shell command and returns its exit code and standard output; its
// standard error is left as the command line sets it (closed, with 2>&-).
SeparateOutput capture_stdout_only(const std::string& command) {
    SeparateOutput r;
    FILE* pipe = popen(command.c_str(), "r");
    std::array<char, 4096> buffer{};
    while (pipe != nullptr && fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
        r.out += buffer.data();
    }
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// A command that writes its pid to `file`, then sleeps in that same process.
std::vector<std::string> pid_writing_sleep(const fs::path& file, const std::string& seconds = "30") {
    return {"sh", "-c", "echo $$ > " + file.string() + "; exec sleep " + seconds};
}

// `zeus run` with a JSON report in `report_file` around a sleep that writes its pid to `pid_file`.
std::vector<std::string> run_writing_pid(const fs::path& report_file, const fs::path& pid_file) {
    std::vector<std::string> argv{zeus_cli_path(), "run", "--simulate",         "--cpus", "none", "--format",
                                  "json",          "-o",  report_file.string(), "--"};
    for (auto& a : pid_writing_sleep(pid_file)) argv.push_back(a);
    return argv;
}

TEST_F(ProcessEdges, RunForwardsEveryTerminatingSignalReportsAndLeavesNoCommandBehind) {
    for (const int sig : kTerminatingSignals) {
        SCOPED_TRACE(name_of(sig));
        const auto pid_file = dir_ / ("pid-" + std::to_string(sig));
        const auto report_file = dir_ / "report.json";
        auto zeus_run = start(run_writing_pid(report_file, pid_file));
        const pid_t command = wait_for_pid_file(pid_file);
        ASSERT_GT(command, 0) << output();
        ::kill(zeus_run.pid, sig);  // to zeus alone
        wait(zeus_run);
        if (!gone(command)) ::kill(command, SIGKILL);
        EXPECT_EQ(zeus_run.killed_by, 0) << "zeus died of the signal itself";
        EXPECT_EQ(zeus_run.exit_code, 128 + sig) << output();
        EXPECT_TRUE(gone(command)) << "the command was left running";
        const auto report = nlohmann::json::parse(read_file(report_file), nullptr, false);
        ASSERT_FALSE(report.is_discarded()) << read_file(report_file) << output();
        EXPECT_EQ(report["exit_code"], 128 + sig);
        EXPECT_EQ(report["signal"], name_of(sig));
        EXPECT_EQ(report["interrupted"], true);
        EXPECT_EQ(report["interrupted_by"], name_of(sig));
        EXPECT_GT(report["devices"].size(), 0U);
    }
}

TEST_F(ProcessEdges, UnderNohupAHangupEndsNeitherZeusNorTheCommand) {
    ignore_hangup_ = true;
    const auto pid_file = dir_ / "pid";
    const auto report_file = dir_ / "report.json";
    auto zeus_run = start(run_writing_pid(report_file, pid_file));
    const pid_t command = wait_for_pid_file(pid_file);
    ASSERT_GT(command, 0) << output();
    ::kill(zeus_run.pid, SIGHUP);
    ::kill(command, SIGHUP);  // the terminal's hangup reaches its whole process group
    ::kill(zeus_run.pid, SIGTERM);
    wait(zeus_run);
    EXPECT_EQ(zeus_run.exit_code, 128 + SIGTERM) << output();
    const auto report = nlohmann::json::parse(read_file(report_file), nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << output();
    EXPECT_EQ(report["interrupted_by"], "SIGTERM");
    EXPECT_EQ(report["signal"], "SIGTERM");
}

TEST_F(ProcessEdges, PowerAndEnergyPrintTheirSummaryOnEveryTerminatingSignal) {
    for (const int sig : kTerminatingSignals) {
        SCOPED_TRACE(name_of(sig));
        auto power = start({zeus(), "power", "--simulate", "--cpus", "none", "--interval", "0.1", "--format", "json"});
        ASSERT_TRUE(wait_for_text(dir_ / "stdout", "power_w")) << output();
        ::kill(power.pid, sig);
        wait(power);
        EXPECT_EQ(power.killed_by, 0);
        EXPECT_EQ(power.exit_code, 0) << output();
        EXPECT_NE(read_file(dir_ / "stdout").find("summary"), std::string::npos) << output();

        const auto report_file = dir_ / "energy.txt";
        auto energy = start({zeus(), "energy", "--simulate", "--cpus", "none", "-o", report_file.string()});
        ASSERT_TRUE(wait_for_text(dir_ / "stderr", "press Ctrl-C to stop")) << output();
        ::kill(energy.pid, sig);
        wait(energy);
        EXPECT_EQ(energy.killed_by, 0);
        EXPECT_EQ(energy.exit_code, 0) << output();
        EXPECT_NE(read_file(report_file).find("GPU 0"), std::string::npos) << output();
    }
}

// Runs `argv` on a new pseudo-terminal, waits for `pid_file`, types Ctrl-C
// and returns zeus's exit code (-1 when killed by a signal).
int run_on_terminal_and_press_ctrl_c(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                     const fs::path& pid_file, std::string& transcript) {
    std::vector<std::string> env_strings = env;
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> arg_strings = argv;
    std::vector<char*> args;
    for (auto& a : arg_strings) args.push_back(a.data());
    args.push_back(nullptr);
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) return -2;
    if (pid == 0) {
        ::execve(args[0], args.data(), envp.data());
        ::_exit(99);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline && read_file(pid_file).empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const char ctrl_c = '\x03';
    [[maybe_unused]] const auto written = ::write(master, &ctrl_c, 1);
    std::array<char, 4096> buffer{};
    while (true) {  // until the terminal's other side is closed (EIO)
        const auto n = ::read(master, buffer.data(), buffer.size());
        if (n <= 0) break;
        transcript.append(buffer.data(), static_cast<std::size_t>(n));
    }
    int raw = 0;
    ::waitpid(pid, &raw, 0);
    ::close(master);
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

TEST_F(ProcessEdges, CtrlCReachesACommandThatLeftZeussProcessGroup) {
    const auto pid_file = dir_ / "pid";
    const auto report_file = dir_ / "report.json";
    std::vector<std::string> argv{zeus(), "run", "--simulate",         "--cpus", "none",  "--format",
                                  "json", "-o",  report_file.string(), "--",     "setsid"};
    for (auto& a : pid_writing_sleep(pid_file, "10")) argv.push_back(a);
    std::string transcript;
    const int code = run_on_terminal_and_press_ctrl_c(argv, environment(), pid_file, transcript);
    const auto pid_text = read_file(pid_file);
    if (!pid_text.empty() && !gone(std::stoi(pid_text))) ::kill(std::stoi(pid_text), SIGKILL);
    EXPECT_EQ(code, 128 + SIGINT) << transcript;
    const auto report = nlohmann::json::parse(read_file(report_file), nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << transcript;
    EXPECT_EQ(report["signal"], "SIGINT") << "the command ran its full length: Ctrl-C never reached it";
    EXPECT_EQ(report["interrupted_by"], "SIGINT");
}

TEST_F(ProcessEdges, CtrlCThatEndsTheCommandIsAlwaysReported) {
    // The command gets Ctrl-C from the terminal at the same time as zeus; however
    // the two race, the report says that the run was interrupted.
    for (int attempt = 0; attempt < 6; ++attempt) {
        SCOPED_TRACE(attempt);
        const auto pid_file = dir_ / ("pid-" + std::to_string(attempt));
        const auto report_file = dir_ / "report.json";
        std::vector<std::string> argv{zeus(), "run", "--simulate",         "--cpus", "none", "--format",
                                      "json", "-o",  report_file.string(), "--"};
        for (auto& a : pid_writing_sleep(pid_file, "10")) argv.push_back(a);
        std::string transcript;
        const int code = run_on_terminal_and_press_ctrl_c(argv, environment(), pid_file, transcript);
        EXPECT_EQ(code, 128 + SIGINT) << transcript;
        const auto report = nlohmann::json::parse(read_file(report_file), nullptr, false);
        ASSERT_FALSE(report.is_discarded()) << transcript;
        EXPECT_EQ(report["signal"], "SIGINT");
        EXPECT_EQ(report["interrupted"], true) << transcript;
    }
}

// Each measurement command with standard output, error or input closed: the
// simulator's state file is opened while they are closed and must not take
// their place.
TEST_F(ProcessEdges, MeasurementCommandsNeverWriteIntoAFileOnAClosedDescriptor) {
    const std::string run = zeus() + " run --simulate --cpus none --format json -o - -- ";
    // The command reports which files zeus (its parent) has on 0-2.
    const std::string fds =
        "sh -c 'readlink /proc/$PPID/fd/0 /proc/$PPID/fd/1 /proc/$PPID/fd/2 > " + (dir_ / "fds").string() + "'";
    auto r = capture_separately(env_ + run + fds + " >&-");
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_NE(r.err.find("cannot write the report to standard output"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(dir_ / "fds").find(state().string()), std::string::npos) << read_file(dir_ / "fds");
    expect_state_free_of({"total_energy_j", "exit_code"}, "run >&-");

    r = capture_stdout_only(env_ + run + fds + " 2>&- <&-");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    EXPECT_EQ(read_file(dir_ / "fds").find(state().string()), std::string::npos) << read_file(dir_ / "fds");
    expect_state_free_of({"total_energy_j", "exit_code"}, "run 2>&-");

    for (const std::string command : {"power", "energy"}) {
        const std::string measure =
            env_ + zeus() + " " + command + " --simulate --cpus none --duration 0.3 --format json";
        r = capture_separately(measure + " >&-");
        EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
        EXPECT_NE(r.err.find("cannot write the report to standard output"), std::string::npos) << r.err;
        expect_state_free_of({"total_energy_j", "power_w"}, command + " >&-");
        r = capture_stdout_only(measure + " 2>&- <&-");
        EXPECT_EQ(r.exit_code, 0) << command << ": " << r.out;
        EXPECT_NE(r.out.find("total_energy_j"), std::string::npos) << r.out;
        expect_state_free_of({"total_energy_j", "power_w"}, command + " 2>&-");
    }
    for (const std::string closed : {" >&-", " 2>&-", " >&- 2>&- <&-"}) {
        (void)capture_stdout_only(env_ + zeus() + " show-env --simulate --format json" + closed);
        expect_state_free_of({"\"gpus\""}, "show-env" + closed);
        (void)capture_stdout_only(env_ + zeus_sim_cli_path() + " status --format json" + closed);
        expect_state_free_of({"ground_truth_energy_j"}, "zeus-sim status" + closed);
        (void)capture_stdout_only(env_ + zeus_sim_cli_path() + " burn --gpu 0 --seconds 0.2" + closed);
        expect_state_free_of({"gpu 0: "}, "zeus-sim burn" + closed);
    }
}

// The servers keep running with closed descriptors: 0-2 stay /dev/null, never
// the simulator's state (or anything else they open later).
TEST_F(ProcessEdges, ServersKeepClosedStandardDescriptorsOffTheirFiles) {
    struct Server {
        std::string name;
        std::vector<std::string> argv;
    };
    const std::vector<Server> servers{
        {"zeus exporter",
         {zeus(), "exporter", "--simulate", "--cpus", "none", "--listen", "127.0.0.1:0", "--period", "0.1"}},
        {"zeusd", {zeusd_path(), "serve", "--socket-path", (dir_ / "zeusd.sock").string()}},
    };
    for (const auto& server : servers) {
        for (const bool stderr_too : {false, true}) {
            SCOPED_TRACE(server.name + (stderr_too ? " with 0-2 closed" : " with 0-1 closed"));
            auto s = start(server.argv, Stream::kClosed, Stream::kClosed,
                           stderr_too ? Stream::kClosed : Stream::kToFile, {"ZEUS_SIMULATE=1"});
            ASSERT_TRUE(wait_until_state_open(s.pid)) << read_file(dir_ / "stderr");
            ASSERT_TRUE(wait_until_catching_sigterm(s.pid)) << read_file(dir_ / "stderr");
            for (int fd = 0; fd <= (stderr_too ? 2 : 1); ++fd) {
                EXPECT_EQ(descriptor_target(s.pid, fd), "/dev/null") << "descriptor " << fd;
            }
            ::kill(s.pid, SIGTERM);
            wait(s);
            EXPECT_EQ(s.exit_code, 0) << read_file(dir_ / "stderr");
        }
    }
}

TEST_F(ProcessEdges, AReportOnAPipeNobodyReadsIsAnErrorWithTheCommandsExitCode) {
    // The reader closes its end before the command ends, so that the report meets a broken pipe.
    const auto gone_marker = dir_ / "reader-gone";
    const std::string command = "sh -c 'while [ ! -e " + gone_marker.string() + " ]; do sleep 0.02; done; exit 3'";
    const auto r =
        capture_separately("bash -c \"" + env_ + zeus() + " run --simulate --cpus none -o - -- " + command +
                           " | { exec 0<&-; touch " + gone_marker.string() + "; }; echo status=\\${PIPESTATUS[0]}\"");
    EXPECT_NE(r.out.find("status=3"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.err.find("cannot write the report to standard output (--output -): Broken pipe"), std::string::npos)
        << r.err;
}

TEST_F(ProcessEdges, AnEarlierReportIsKeptUntilThereIsANewOne) {
    const auto report = dir_ / "report.json";
    std::ofstream(report) << "the earlier report\n";
    auto r = capture_separately(env_ + zeus() + " run --simulate --cpus none --format json -o " + report.string() +
                                " -- zeus-no-such-command-xyz");
    EXPECT_EQ(r.exit_code, 127) << r.err;
    EXPECT_EQ(read_file(report), "the earlier report\n");
    r = capture_separately(env_ + zeus() + " run --simulate --cpus none --format json -o " + report.string() +
                           " -- true");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::accept(read_file(report))) << read_file(report);
    // No temporary file is left beside it.
    for (const auto& entry : fs::directory_iterator(dir_)) {
        EXPECT_EQ(entry.path().filename().string().find("report.json."), std::string::npos) << entry.path();
    }
}

TEST_F(ProcessEdges, OutputsNamingOneFileAreRefusedBeforeAnythingRuns) {
    const auto file = dir_ / "out.json";
    const auto link = dir_ / "link.json";
    std::ofstream(file) << "kept\n";
    fs::create_symlink(file, link);
    const auto marker = dir_ / "ran";
    const std::string command = " -- touch " + marker.string();
    const std::string run = env_ + zeus() + " run --simulate --cpus none ";
    struct Case {
        std::string options;
        std::string first, second;  // the two options named in the error
    };
    const std::vector<Case> cases{
        {"-o " + file.string() + " --trace " + file.string(), "--output", "--trace"},
        {"-o " + file.string() + " --log-file " + (dir_ / "." / "out.json").string(), "--output", "--log-file"},
        {"-o " + link.string() + " --trace " + file.string(), "--output", "--trace"},
        {"--log-file " + (dir_ / "new.csv").string() + " --trace " + dir_.string() + "//new.csv", "--log-file",
         "--trace"},
    };
    for (const auto& c : cases) {
        const auto r = capture_separately(run + c.options + command);
        EXPECT_EQ(r.exit_code, 125) << c.options << "\n" << r.err;
        EXPECT_NE(r.err.find("name the same file"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(c.first), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(c.second), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(marker)) << c.options << ": the command ran";
        EXPECT_EQ(read_file(file), "kept\n");
    }
    for (const std::string measure : {"power", "energy"}) {
        const auto r = capture_separately(env_ + zeus() + " " + measure + " --simulate --cpus none --duration 0.1 -o " +
                                          file.string() + " --log-file " + link.string());
        EXPECT_EQ(r.exit_code, 2) << measure << ": " << r.err;
        EXPECT_NE(r.err.find("name the same file"), std::string::npos) << r.err;
        EXPECT_EQ(read_file(file), "kept\n");
    }
    // A device may take more than one output.
    const auto r = capture_separately(run + "-o /dev/null --trace /dev/null" + command);
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace zeus::testing
