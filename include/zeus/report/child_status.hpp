// How a measured child process ended, as plain data: the CLI's `zeus run`
// waits for its command and hands this to the measurement report.
#pragma once

#include <string>

namespace zeus::report {

struct ChildStatus {
    bool exited = true;  // false: killed by a signal
    int code = 0;        // exit code when exited
    int signal = 0;      // the signal when !exited

    // From a waitpid() status.
    static ChildStatus from_wait_status(int status);
    // What a shell would report as $?: the code, or 128 + the signal.
    [[nodiscard]] int shell_exit_code() const { return exited ? code : 128 + signal; }
    // "exited with code 0", "killed by signal 2 (SIGINT)".
    [[nodiscard]] std::string describe() const;
};

// "SIGINT" for 2, ..., "signal 42" for a signal without a common name.
[[nodiscard]] std::string signal_name(int signal);

}  // namespace zeus::report
