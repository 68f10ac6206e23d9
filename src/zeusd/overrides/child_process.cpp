#include "zeusd/overrides/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace zeus::zeusd {
namespace {

using Clock = std::chrono::steady_clock;

// Without a pidfd (kernels before 5.3, or seccomp filters) the exit is noticed
// by polling waitpid this often.
constexpr auto kWaitTick = std::chrono::milliseconds(10);
// How long a killed child may take to die before it is left to a reaper thread
// (a process stuck in the kernel, e.g. in a GPU driver call, ignores SIGKILL).
constexpr auto kKillGrace = std::chrono::seconds(5);
// Timeouts beyond this are treated as this, so deadlines cannot overflow.
constexpr auto kLongestTimeout = std::chrono::hours(24 * 365 * 100);

class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    [[nodiscard]] int get() const { return fd_; }
    [[nodiscard]] bool valid() const { return fd_ >= 0; }
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

  private:
    int fd_ = -1;
};

struct Pipe {
    UniqueFd read_end;
    UniqueFd write_end;
};

// O_CLOEXEC on both ends: another thread spawning at the same moment must not
// inherit them, or this pipe would never see its end-of-file.
std::optional<Pipe> make_pipe() {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) return std::nullopt;
    return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// One of the child's output streams, read as it arrives so that a chatty
// child never blocks on a full pipe.
class OutputStream {
  public:
    OutputStream(std::string_view name, UniqueFd fd) : name_(name), fd_(std::move(fd)) {}

    [[nodiscard]] bool open() const { return fd_.valid(); }
    [[nodiscard]] int fd() const { return fd_.get(); }

    // Called when poll() says the pipe is readable or hung up, so one read()
    // does not block.
    void read_some() {
        std::array<char, 16 * 1024> buffer{};
        const auto count = ::read(fd_.get(), buffer.data(), buffer.size());
        if (count > 0) {
            text_.append(buffer.data(), static_cast<std::size_t>(count));
            // Trim only now and then so that appending stays linear.
            if (text_.size() > 2 * kKeptOutputBytes) text_.erase(0, text_.size() - kKeptOutputBytes);
        } else if (count == 0) {
            fd_.reset();
        } else if (errno != EINTR && errno != EAGAIN) {
            problem_ = fmt::format("{} could not be read: {}", name_, std::strerror(errno));
            fd_.reset();
        }
    }

    // Gives up on a stream still open after the grace period.
    void abandon(std::chrono::milliseconds grace) {
        if (!open()) return;
        problem_ = fmt::format(
            "{} was still open {} ms after the command ended, likely held by a leftover child process",
            name_, grace.count());
        fd_.reset();
    }

    [[nodiscard]] std::string take_text() {
        if (text_.size() > kKeptOutputBytes) text_.erase(0, text_.size() - kKeptOutputBytes);
        return std::move(text_);
    }
    [[nodiscard]] const std::string& problem() const { return problem_; }

  private:
    std::string_view name_;
    UniqueFd fd_;
    std::string text_;
    std::string problem_;
};

// Polls the open streams (and the pidfd, when there is one) for at most
// `wait`, then reads whatever is ready.
void poll_streams(OutputStream& out, OutputStream& err, const UniqueFd& pidfd, Clock::duration wait) {
    std::array<pollfd, 3> fds{};
    std::array<OutputStream*, 3> owners{};
    nfds_t count = 0;
    for (auto* stream : {&out, &err}) {
        if (!stream->open()) continue;
        fds[count] = pollfd{stream->fd(), POLLIN, 0};
        owners[count++] = stream;
    }
    if (pidfd.valid()) fds[count++] = pollfd{pidfd.get(), POLLIN, 0};
    // Round up so that a sub-millisecond remainder does not spin.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max(wait, Clock::duration::zero()));
    const int timeout_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(ms.count(), 60'000));
    if (::poll(fds.data(), count, timeout_ms) <= 0) return;  // timeout, or EINTR from a signal handler
    for (nfds_t i = 0; i < count; ++i) {
        if (owners[i] != nullptr && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) owners[i]->read_some();
    }
}

UniqueFd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#else
    (void)pid;
    return UniqueFd();
#endif
}

// posix_spawnp rather than fork: it is safe in a multi-threaded daemon, and
// glibc reports exec failures (ENOENT, EACCES) through its return value.
// Returns the pid, or the errno.
std::pair<pid_t, int> spawn(const std::vector<std::string>& argv, int stdout_fd, int stderr_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if (const int error = ::posix_spawn_file_actions_init(&actions); error != 0) return {-1, error};
    if (const int error = ::posix_spawnattr_init(&attributes); error != 0) {
        ::posix_spawn_file_actions_destroy(&actions);
        return {-1, error};
    }
    int error = ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    if (error == 0) error = ::posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors other parts of the daemon opened without O_CLOEXEC
    // (sockets, device files) must not reach a vendor tool either.
    if (error == 0) error = ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
    // Own process group (pgid = pid) so that a timeout can kill the whole
    // tree; default dispositions because ignored signals (the daemon likely
    // ignores SIGPIPE) would otherwise be inherited across exec.
    sigset_t empty_set;
    sigset_t all_signals;
    ::sigemptyset(&empty_set);
    ::sigfillset(&all_signals);
    if (error == 0) error = ::posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = ::posix_spawnattr_setsigmask(&attributes, &empty_set);
    if (error == 0) error = ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
    if (error == 0) {
        error = ::posix_spawnattr_setflags(
            &attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    pid_t pid = -1;
    if (error == 0) {
        std::vector<std::string> copies = argv;  // exec wants char*, not const char*
        std::vector<char*> pointers;
        pointers.reserve(copies.size() + 1);
        for (auto& word : copies) pointers.push_back(word.data());
        pointers.push_back(nullptr);
        error = ::posix_spawnp(&pid, pointers[0], &actions, &attributes, pointers.data(), environ);
    }
    ::posix_spawnattr_destroy(&attributes);
    ::posix_spawn_file_actions_destroy(&actions);
    return {error == 0 ? pid : -1, error};
}

// waitpid without blocking; nullopt while the child runs, else its status or
// the errno (negated) when it cannot be waited for.
std::optional<int> try_reap(pid_t pid) {
    while (true) {
        int status = 0;
        const pid_t reaped = ::waitpid(pid, &status, WNOHANG);
        if (reaped == pid) return status;
        if (reaped == 0) return std::nullopt;
        if (errno != EINTR) return -errno - 1;  // < 0, distinct from any status
    }
}

void record_exit(ChildResult& result, int status) {
    if (WIFEXITED(status)) {
        result.end = ChildResult::End::Exited;
        result.exit_code = WEXITSTATUS(status);
    } else {
        result.end = ChildResult::End::Signaled;
        result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
}

// SIGKILLs the child's process group and reaps the child, waiting at most
// kKillGrace; a child that outlives that is left to a detached reaper thread.
void kill_group(pid_t pid, const UniqueFd& pidfd, ChildResult& result) {
    // The unreaped child keeps its pid, and so the group id, from being reused.
    if (::kill(-pid, SIGKILL) != 0 && ::kill(pid, SIGKILL) != 0) {
        result.kill_problem = fmt::format("could not be killed: {}", std::strerror(errno));
    }
    const auto give_up = Clock::now() + kKillGrace;
    while (true) {
        const auto status = try_reap(pid);
        if (status && *status < 0) {
            result.kill_problem = fmt::format("could not be reaped: {}", std::strerror(-*status - 1));
            return;
        }
        if (status) return;
        const auto now = Clock::now();
        if (now >= give_up) break;
        if (pidfd.valid()) {
            pollfd fd{pidfd.get(), POLLIN, 0};
            ::poll(&fd, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count()));
        } else {
            std::this_thread::sleep_for(kWaitTick);
        }
    }
    if (result.kill_problem.empty()) {
        result.kill_problem = fmt::format("was still running {} s after SIGKILL", kKillGrace.count());
    }
    std::thread([pid] { ::waitpid(pid, nullptr, 0); }).detach();
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                      std::chrono::milliseconds grace) {
    ChildResult result;
    auto out_pipe = make_pipe();
    auto err_pipe = out_pipe ? make_pipe() : std::nullopt;
    if (!out_pipe || !err_pipe) {
        result.os_error = errno;
        return result;
    }
    const auto [pid, spawn_error] = spawn(argv, out_pipe->write_end.get(), err_pipe->write_end.get());
    // Only the child may hold the write ends, or end-of-file never comes.
    out_pipe->write_end.reset();
    err_pipe->write_end.reset();
    if (pid < 0) {
        result.os_error = spawn_error;
        return result;
    }

    OutputStream out("stdout", std::move(out_pipe->read_end));
    OutputStream err("stderr", std::move(err_pipe->read_end));
    const UniqueFd pidfd = open_pidfd(pid);
    const auto deadline = Clock::now() + std::min<std::chrono::seconds>(timeout, kLongestTimeout);
    while (true) {
        if (const auto status = try_reap(pid)) {
            if (*status >= 0) {
                record_exit(result, *status);
            } else {
                result.end = ChildResult::End::WaitFailed;
                result.os_error = -*status - 1;
            }
            break;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            result.end = ChildResult::End::TimedOut;
            kill_group(pid, pidfd, result);
            break;
        }
        auto wait = deadline - now;
        if (!pidfd.valid()) wait = std::min<Clock::duration>(wait, kWaitTick);
        poll_streams(out, err, pidfd, wait);
    }

    // A grandchild may still hold the pipes (a daemonized helper, or sudo's
    // child after sudo was killed): wait a bounded time, never forever.
    const auto grace_end = Clock::now() + grace;
    while (out.open() || err.open()) {
        const auto now = Clock::now();
        if (now >= grace_end) break;
        poll_streams(out, err, UniqueFd(), grace_end - now);
    }
    out.abandon(grace);
    err.abandon(grace);
    result.stdout_text = out.take_text();
    result.stderr_text = err.take_text();
    for (const auto* problem : {&out.problem(), &err.problem()}) {
        if (problem->empty()) continue;
        if (!result.output_problem.empty()) result.output_problem += "; ";
        result.output_problem += *problem;
    }
    return result;
}

}  // namespace zeus::zeusd
