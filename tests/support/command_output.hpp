// Runs a shell command for a test and returns what it printed (stdout and
// stderr together, or apart) with its exit code (-1 when it did not exit
// normally).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace zeus::testing {

inline std::string capture(const std::string& command, int& exit_code) {
    std::string out;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    std::array<char, 4096> buffer{};
    while (pipe != nullptr && fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
        out += buffer.data();
    }
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

// Standard output and standard error apart, for checks that one of them holds
// exactly one document.
struct SeparateOutput {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline SeparateOutput capture_separately(const std::string& command) {
    SeparateOutput r;
    char path[] = "/tmp/zeus-test-stderr-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd >= 0) ::close(fd);
    FILE* pipe = popen((command + " 2>" + path).c_str(), "r");
    std::array<char, 4096> buffer{};
    while (pipe != nullptr && fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
        r.out += buffer.data();
    }
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(path);
    std::stringstream err;
    err << in.rdbuf();
    r.err = err.str();
    ::unlink(path);
    return r;
}

}  // namespace zeus::testing
