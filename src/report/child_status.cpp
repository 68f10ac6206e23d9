#include "zeus/report/child_status.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>

namespace zeus::report {

ChildStatus ChildStatus::from_wait_status(int status) {
    ChildStatus s;
    if (WIFEXITED(status)) {
        s.exited = true;
        s.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        s.exited = false;
        s.signal = WTERMSIG(status);
    }
    return s;
}

std::string ChildStatus::describe() const {
    if (exited) return fmt::format("exited with code {}", code);
    return fmt::format("killed by signal {} ({})", signal, signal_name(signal));
}

std::string signal_name(int signal) {
    switch (signal) {
        case SIGHUP: return "SIGHUP";
        case SIGINT: return "SIGINT";
        case SIGQUIT: return "SIGQUIT";
        case SIGILL: return "SIGILL";
        case SIGTRAP: return "SIGTRAP";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGKILL: return "SIGKILL";
        case SIGUSR1: return "SIGUSR1";
        case SIGSEGV: return "SIGSEGV";
        case SIGUSR2: return "SIGUSR2";
        case SIGPIPE: return "SIGPIPE";
        case SIGALRM: return "SIGALRM";
        case SIGTERM: return "SIGTERM";
        case SIGCHLD: return "SIGCHLD";
        case SIGXCPU: return "SIGXCPU";
        case SIGXFSZ: return "SIGXFSZ";
        default: return fmt::format("signal {}", signal);
    }
}

}  // namespace zeus::report
