// Where a server that a test started on port 0 listens: the address in the
// "listening on HOST:PORT" line it prints (zeusd's log, the CLI servers'
// standard error). A port picked beforehand (bound, closed, handed over) can
// be taken by another process in between; port 0 cannot.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace zeus::testing {

struct ListeningAddress {
    std::string host;  // as printed: "127.0.0.1", "[::1]"
    unsigned short port = 0;

    // "127.0.0.1" or "::1": what a socket connects to.
    [[nodiscard]] std::string ip() const {
        return host.size() >= 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
    }
    [[nodiscard]] std::string host_port() const { return host + ":" + std::to_string(port); }
};

// HOST:PORT right after `marker` in `line`; nullopt when the line has none.
// HOST is an IPv4 address, a name or a bracketed IPv6 address.
inline std::optional<ListeningAddress> parse_listening_line(std::string_view line, std::string_view marker) {
    const auto at = line.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = line.substr(at + marker.size());
    const auto host_end = rest.starts_with('[') ? rest.find("]:") + 1 : rest.find(':');
    if (host_end == 0 || host_end == std::string_view::npos || host_end >= rest.size() || rest[host_end] != ':') {
        return std::nullopt;
    }
    ListeningAddress address{std::string(rest.substr(0, host_end)), 0};
    unsigned long port = 0;
    std::size_t digits = 0;
    for (const char c : rest.substr(host_end + 1)) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || ++digits > 5) break;
        port = port * 10 + static_cast<unsigned long>(c - '0');
    }
    if (digits == 0 || digits > 5 || port > 65535) return std::nullopt;
    address.port = static_cast<unsigned short>(port);
    return address;
}

namespace listening_detail {

inline std::string read_from(const std::filesystem::path& path, std::uintmax_t from) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Whether `pid` (a child of this process) has exited; it stays a zombie for
// the caller's own waitpid.
inline bool exited(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace listening_detail

// Waits until the file `output`, which the child `pid` writes, has a whole
// line with `marker` and HOST:PORT after it (looking from byte `from`, so a
// log that earlier runs appended to does not answer), and returns that
// address. Throws std::runtime_error with the output when the child exits
// first, prints port 0 (it did not say which port it bound), or `timeout`
// passes.
inline ListeningAddress wait_for_listening(const std::filesystem::path& output, pid_t pid,
                                           std::string_view marker = "listening on ",
                                           std::chrono::milliseconds timeout = std::chrono::seconds(30),
                                           std::uintmax_t from = 0) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string text;
    for (;;) {
        // Checked before reading: a line written just before the exit is still found.
        const bool gone = listening_detail::exited(pid);
        text = listening_detail::read_from(output, from);
        std::istringstream lines(text);
        std::string line;
        while (std::getline(lines, line) && !lines.eof()) {  // a last line without '\n' may be half written
            if (auto address = parse_listening_line(line, marker)) {
                if (address->port == 0) {
                    throw std::runtime_error("the server printed port 0 instead of the port it bound: " + line);
                }
                return *address;
            }
        }
        if (gone) break;
        if (std::chrono::steady_clock::now() > deadline) {
            throw std::runtime_error("no '" + std::string(marker) + "HOST:PORT' line from the server (pid " +
                                     std::to_string(pid) + ") in " + std::to_string(timeout.count()) + " ms; " +
                                     output.string() + " holds:\n" + text);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("the server (pid " + std::to_string(pid) + ") exited before it printed '" +
                             std::string(marker) + "HOST:PORT'; " + output.string() + " holds:\n" + text);
}

}  // namespace zeus::testing
