// Runs one command without a shell and waits for it with a deadline: the
// process-level half of the GPU command overrides.
//
// Safe to call from many threads at once. The child gets stdin from
// /dev/null, stdout and stderr on pipes, default signal dispositions, an empty
// signal mask, no other file descriptors, and a process group of its own so a
// timeout kills what it started too. The child is waited for by its pid only,
// so a SIGCHLD handler of the daemon does not disturb it, as long as that
// handler does not reap children itself and SIGCHLD is not set to SIG_IGN
// (either makes the exit status unobtainable: the run fails as WaitFailed).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace zeus::zeusd {

// How much of each stream is kept (the end of it). Bounded because the output
// is kept in memory and matched by std::regex, whose recursion grows with the
// text.
inline constexpr std::size_t kKeptOutputBytes = 16 * 1024;

struct ChildResult {
    enum class End {
        Exited,       // exit_code is valid
        Signaled,     // signal is valid
        TimedOut,     // killed (the whole group) at the deadline; problem says more if it did not die
        SpawnFailed,  // os_error is valid (e.g. ENOENT for a missing program)
        WaitFailed,   // os_error is valid; the exit status is unknown
    };
    End end = End::SpawnFailed;
    int exit_code = 0;
    int signal = 0;
    int os_error = 0;
    std::string stdout_text;  // the last kKeptOutputBytes, raw bytes
    std::string stderr_text;
    // Empty when both streams were read to their end; otherwise why not, e.g.
    // a leftover grandchild still holding the pipe after the grace period.
    std::string output_problem;
    // Set for a TimedOut child that could not be killed or reaped.
    std::string kill_problem;
};

// argv[0] is looked up in PATH like execvp does. `timeout` counts from the
// spawn; after the child ends, its output is collected for at most `grace`
// more. Precondition: !argv.empty().
[[nodiscard]] ChildResult run_child(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                                    std::chrono::milliseconds grace);

}  // namespace zeus::zeusd
