// Signals and child processes for the measurement commands.
//
// SignalPipe turns the terminating signals (and SIGCHLD, for `zeus run`) into
// bytes on a pipe (the self-pipe trick): the handler only write()s, and the
// main loop poll()s the pipe with a timeout, so "a period passed", "the user
// pressed Ctrl-C" and "the child exited" are all handled in ordinary code.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeus/report/child_status.hpp"

namespace zeus::cli {

struct ReceivedSignal {
    int signal = 0;
    // Sent by a process with kill()/sigqueue() (SI_USER, SI_QUEUE), rather
    // than by the kernel, as the terminal's Ctrl-C is: a terminal signal goes
    // to the whole foreground process group, the child included when it is
    // still in zeus's process group.
    bool from_process = false;
    // Raised by zeus itself: the kernel's SIGPIPE for a write to a pipe nobody
    // reads (that write fails with EPIPE and says so), never a stop request.
    bool from_self = false;
};

// The signals whose default action ends a process and that a user, a terminal,
// a batch scheduler or a closing ssh session sends: SIGHUP, SIGINT, SIGQUIT,
// SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE. The measurement commands treat
// each like SIGTERM (stop, forward to the command, report), as timeout(1) does.
[[nodiscard]] const std::vector<int>& terminating_signals();

// A request to stop: a terminating signal that zeus did not raise itself.
[[nodiscard]] bool is_stop_request(const ReceivedSignal& received);

// Whether a signal zeus received reached the command `pid` as well: a
// terminal's signal (Ctrl-C, Ctrl-\, a hangup) goes to the terminal's
// foreground process group, so it reached the command when the command is
// still in zeus's group (a command that called setsid() left it). Everything
// else was sent to zeus alone and is to be forwarded.
[[nodiscard]] bool reached_command_too(const ReceivedSignal& received, pid_t pid);

// Blocks `signals` in the calling thread, so that every thread started from now
// on (device samplers, monitors) has them blocked and only the thread that then
// installs a SignalPipe for them receives them. Call first in a command, before
// anything starts a thread: a signal that arrives before a wait on the pipe
// returns is then always in the pipe when the wait returns (its handler ran on
// this thread before the system call returned), so `zeus run` knows exactly
// whether a signal arrived while the command ran.
void route_signals_to_this_thread(const std::vector<int>& signals);

class SignalPipe {
  public:
    // Installs the handlers and unblocks the signals in the calling thread; the
    // previous dispositions come back when the object is destroyed. SIGHUP that
    // zeus's caller ignores (nohup) stays ignored. Only one SignalPipe may
    // exist at a time (a signal handler can only reach a global).
    static Result<std::unique_ptr<SignalPipe>> install(const std::vector<int>& signals);
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;
    ~SignalPipe();

    // Waits up to `timeout` (not at all for zero) and returns the signals
    // that arrived, in order; empty when the time ran out first.
    std::vector<ReceivedSignal> wait(std::chrono::nanoseconds timeout);
    // The same wait as a stop request for zeus's measurement loops
    // (StopWait): true when a stop request (is_stop_request) came.
    bool wait_for_termination(std::chrono::nanoseconds timeout);

  private:
    struct Saved;
    SignalPipe(int read_fd, int write_fd, std::vector<Saved> saved);
    int read_fd_;
    int write_fd_;
    std::vector<Saved> saved_;
};

// How a child process ended (plain data the measurement report takes).
using report::ChildStatus;
using report::signal_name;

// The command's name is usable: given (zeus's own usage error otherwise, as
// an option error: exit 125) and not an empty string.
[[nodiscard]] Status check_command_name(const std::vector<std::string>& argv);
// For a command posix_spawn could not find: the missing interpreter its
// script's first line (#!) names, if that is why.
[[nodiscard]] std::optional<std::string> missing_interpreter(const std::string& command);

// Starts `argv` (looked up in PATH when argv[0] has no slash) with the
// default disposition for SIGINT, SIGTERM, SIGCHLD and SIGPIPE and no signal
// blocked, sharing zeus's process group, standard streams and environment.
// Errors: NotFound when there is no such command (a shell's 127), NoPermission
// when it cannot be executed (a shell's 126), OperatingSystem otherwise.
// Where the command's standard output goes.
enum class ChildStdout {
    kInherited,
    kToStderr,   // zeus's standard error, leaving standard output to zeus's report (`--output -`)
    kDiscarded,  // /dev/null: a workload whose own report would interleave with zeus's
};
[[nodiscard]] Result<pid_t> spawn_command(const std::vector<std::string>& argv,
                                          ChildStdout output = ChildStdout::kInherited);

// The exit code a shell uses for a command that could not be started.
[[nodiscard]] int spawn_failure_exit_code(const Error& error);

}  // namespace zeus::cli
