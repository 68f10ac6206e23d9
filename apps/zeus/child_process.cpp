#include "child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

extern char** environ;

namespace zeus::cli {
namespace {

// The pipe's write end, for the handler. A lock-free atomic is safe to read
// in a signal handler.
std::atomic<int> g_write_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

// The second byte of a message: who sent the signal.
constexpr unsigned char kFromProcess = 1;
constexpr unsigned char kFromSelf = 2;

sigset_t signal_set(const std::vector<int>& signals) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : signals) sigaddset(&set, sig);
    return set;
}

// The signals a terminal sends to its foreground process group.
bool sent_by_terminals(int signal) { return signal == SIGINT || signal == SIGQUIT || signal == SIGHUP; }

extern "C" void on_signal(int signal, siginfo_t* info, void* /*context*/) {
    const int saved_errno = errno;
    const int fd = g_write_fd.load(std::memory_order_relaxed);
    if (fd >= 0) {
        const bool from_process = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
        // The kernel's SIGPIPE for our own write is SI_USER with our own pid.
        const bool from_self = from_process && info->si_pid == ::getpid();
        const std::array<unsigned char, 2> message{
            static_cast<unsigned char>(signal),
            static_cast<unsigned char>((from_process ? kFromProcess : 0) | (from_self ? kFromSelf : 0))};
        // Non-blocking: when the pipe is full the main loop has plenty to read already.
        [[maybe_unused]] const ssize_t n = ::write(fd, message.data(), message.size());
    }
    errno = saved_errno;
}

}  // namespace

struct SignalPipe::Saved {
    int signal;
    struct sigaction action;
};

const std::vector<int>& terminating_signals() {
    static const std::vector<int> signals{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE};
    return signals;
}

bool is_stop_request(const ReceivedSignal& received) {
    const auto& stops = terminating_signals();
    return !received.from_self && std::find(stops.begin(), stops.end(), received.signal) != stops.end();
}

bool reached_command_too(const ReceivedSignal& received, pid_t pid) {
    return !received.from_process && sent_by_terminals(received.signal) && ::getpgid(pid) == ::getpgrp();
}

void route_signals_to_this_thread(const std::vector<int>& signals) {
    const sigset_t set = signal_set(signals);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Result<std::unique_ptr<SignalPipe>> SignalPipe::install(const std::vector<int>& signals) {
    std::array<int, 2> fds{-1, -1};
    if (::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) != 0) {
        return Error{ErrorCode::OperatingSystem, fmt::format("cannot create a pipe: {}", std::strerror(errno)), ""};
    }
    int expected = -1;
    if (!g_write_fd.compare_exchange_strong(expected, fds[1])) {
        ::close(fds[0]);
        ::close(fds[1]);
        return Error{ErrorCode::InvalidState, "signal handlers are already installed", ""};
    }
    std::vector<Saved> saved;
    std::vector<int> handled;
    for (int sig : signals) {
        struct sigaction current {};
        // nohup's SIGHUP: the caller asked for the hangup not to end zeus or the command.
        if (sig == SIGHUP && ::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        struct sigaction action {};
        action.sa_sigaction = on_signal;
        action.sa_flags = SA_SIGINFO | SA_RESTART | (sig == SIGCHLD ? SA_NOCLDSTOP : 0);
        sigemptyset(&action.sa_mask);
        Saved old{sig, {}};
        if (::sigaction(sig, &action, &old.action) != 0) {
            const int err = errno;
            for (const auto& s : saved) ::sigaction(s.signal, &s.action, nullptr);
            g_write_fd.store(-1);
            ::close(fds[0]);
            ::close(fds[1]);
            return Error{ErrorCode::OperatingSystem,
                         fmt::format("cannot handle {}: {}", signal_name(sig), std::strerror(err)), ""};
        }
        saved.push_back(old);
        handled.push_back(sig);
    }
    // Blocked since route_signals_to_this_thread (if it was called): from now on this thread takes them.
    const sigset_t set = signal_set(handled);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    return std::unique_ptr<SignalPipe>(new SignalPipe(fds[0], fds[1], std::move(saved)));
}

SignalPipe::SignalPipe(int read_fd, int write_fd, std::vector<Saved> saved)
    : read_fd_(read_fd), write_fd_(write_fd), saved_(std::move(saved)) {}

SignalPipe::~SignalPipe() {
    for (const auto& s : saved_) ::sigaction(s.signal, &s.action, nullptr);
    g_write_fd.store(-1);
    ::close(read_fd_);
    ::close(write_fd_);
}

std::vector<ReceivedSignal> SignalPipe::wait(std::chrono::nanoseconds timeout) {
    std::vector<ReceivedSignal> received;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
    pollfd pfd{read_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, 1'000'000'000)));
    if (ready <= 0) return received;  // timeout, or EINTR: the next wait sees the bytes
    std::array<unsigned char, 256> buffer{};
    std::size_t pending = 0;
    while (true) {
        const ssize_t n = ::read(read_fd_, buffer.data() + pending, buffer.size() - pending);
        if (n <= 0) break;
        pending += static_cast<std::size_t>(n);
        std::size_t i = 0;
        for (; i + 1 < pending; i += 2) {
            received.push_back({buffer[i], (buffer[i + 1] & kFromProcess) != 0, (buffer[i + 1] & kFromSelf) != 0});
        }
        // Messages are 2 bytes and pipe writes of 2 bytes are atomic; keep an odd byte just in case.
        if (i < pending) buffer[0] = buffer[i];
        pending -= i;
    }
    return received;
}

bool SignalPipe::wait_for_termination(std::chrono::nanoseconds timeout) {
    bool stop = false;
    for (const auto& s : wait(timeout)) stop = stop || is_stop_request(s);
    return stop;
}

Status check_command_name(const std::vector<std::string>& argv) {
    if (argv.empty()) {
        return Error{ErrorCode::InvalidArgument, "no command given",
                     "put the command after --, e.g. zeus run -- python train.py"};
    }
    if (argv.front().empty()) {
        return Error{ErrorCode::InvalidArgument, "the command's name is an empty string ('')",
                     "put the program to run after --, e.g. zeus run -- python train.py"};
    }
    return {};
}

namespace {

// The file a shell would run for `command`: itself when it names a path,
// else the first match on PATH.
std::optional<std::string> resolve_command(const std::string& command) {
    if (command.find('/') != std::string::npos) return command;
    const char* path = std::getenv("PATH");
    std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
    while (true) {
        const auto colon = rest.find(':');
        const std::string_view dir = rest.substr(0, colon);
        const std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + command;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(colon + 1);
    }
}

}  // namespace

// posix_spawn says ENOENT both for a missing program and for a script whose
// #! interpreter is missing; a shell tells them apart, and so do we.
std::optional<std::string> missing_interpreter(const std::string& command) {
    const auto file = resolve_command(command);
    if (!file) return std::nullopt;
    std::ifstream in(*file, std::ios::binary);
    std::string first;
    if (!in || !std::getline(in, first) || !first.starts_with("#!")) return std::nullopt;
    const auto begin = first.find_first_not_of(" \t", 2);
    if (begin == std::string::npos) return std::nullopt;
    const auto end = first.find_first_of(" \t\r", begin);
    std::string interpreter = first.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (::access(interpreter.c_str(), F_OK) == 0) return std::nullopt;
    return interpreter;
}

Result<pid_t> spawn_command(const std::vector<std::string>& argv, ChildStdout output) {
    if (auto usage = check_command_name(argv); !usage) return usage.error();
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: posix_spawn's API
    args.push_back(nullptr);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGQUIT}) sigaddset(&defaults, sig);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    if (output == ChildStdout::kToStderr) posix_spawn_file_actions_adddup2(&files, STDERR_FILENO, STDOUT_FILENO);
    if (output == ChildStdout::kDiscarded) {
        posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &files, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) return pid;
    const std::string& command = argv.front();
    if (rc == ENOENT) {
        if (auto interpreter = missing_interpreter(command)) {
            return Error{ErrorCode::NotFound,
                         fmt::format("{}: bad interpreter: {} (named on its first line, #!) does not exist", command,
                                     *interpreter),
                         "install it, or correct the script's first line"};
        }
    }
    if (rc == ENOENT || rc == ENOTDIR) {
        return Error{ErrorCode::NotFound, fmt::format("{}: command not found", command),
                     command.find('/') == std::string::npos ? "check the spelling and that it is on PATH"
                                                            : "check the path"};
    }
    if (rc == EACCES || rc == ENOEXEC || rc == EPERM || rc == EISDIR) {
        return Error{ErrorCode::NoPermission, fmt::format("{}: cannot execute: {}", command, std::strerror(rc)),
                     "check that it is an executable file (chmod +x) and not a directory"};
    }
    return Error{ErrorCode::OperatingSystem, fmt::format("{}: cannot start: {}", command, std::strerror(rc)), ""};
}

int spawn_failure_exit_code(const Error& error) {
    if (error.code == ErrorCode::NotFound) return 127;
    return 126;
}

}  // namespace zeus::cli
