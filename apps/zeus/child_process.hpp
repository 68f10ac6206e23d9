// Signals and child processes for the measurement commands.
//
// SignalPipe turns SIGINT/SIGTERM (and SIGCHLD, for `zeus run`) into bytes on
// a pipe (the self-pipe trick): the handler only write()s, and the main loop
// poll()s the pipe with a timeout, so "a period passed", "the user pressed
// Ctrl-C" and "the child exited" are all handled in ordinary code.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeus/report/child_status.hpp"

namespace zeus::cli {

struct ReceivedSignal {
    int signal = 0;
    // Sent by a process with kill()/sigqueue() (SI_USER, SI_QUEUE), rather
    // than by the kernel, as the terminal's Ctrl-C is: a terminal signal goes
    // to the whole foreground process group, the child included already.
    bool from_process = false;
};

class SignalPipe {
  public:
    // Installs the handlers; the previous dispositions come back when the
    // object is destroyed. Only one SignalPipe may exist at a time (a signal
    // handler can only reach a global).
    static Result<std::unique_ptr<SignalPipe>> install(std::initializer_list<int> signals);
    SignalPipe(const SignalPipe&) = delete;
    SignalPipe& operator=(const SignalPipe&) = delete;
    ~SignalPipe();

    // Waits up to `timeout` (not at all for zero) and returns the signals
    // that arrived, in order; empty when the time ran out first.
    std::vector<ReceivedSignal> wait(std::chrono::nanoseconds timeout);
    // The same wait as a stop request for zeus's measurement loops
    // (StopWait): true when SIGINT or SIGTERM came.
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
