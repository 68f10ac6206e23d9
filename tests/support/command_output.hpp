// Runs a shell command for a test and returns what it printed (stdout and
// stderr together) with its exit code (-1 when it did not exit normally).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

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

}  // namespace zeus::testing
