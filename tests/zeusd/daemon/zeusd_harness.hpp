// What the daemon tests need: a real zeusd process on a temporary socket
// over the GPU simulator (a state file shared with the test, so the test can
// check the GPUs independently) and a fake powercap tree, and a small
// blocking HTTP client that can also send raw bytes.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zeus::testing {

struct HttpReply {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;
};

struct Endpoint {
    std::optional<std::string> unix_path;
    std::optional<std::string> tcp_host;
    unsigned short tcp_port = 0;
};

// One request per connection (Connection: close), as httpx does by default
// for short-lived clients. Throws std::runtime_error on transport errors.
HttpReply http_request(const Endpoint& endpoint, const std::string& method, const std::string& target,
                       const std::map<std::string, std::string>& headers = {});
// Sends `bytes` as they are and returns everything the server sends until
// it closes the connection or `timeout` passes.
std::string raw_exchange(const Endpoint& endpoint, const std::string& bytes,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));
// Reads from `fd` until `part` has arrived (empty: until the server closes),
// the connection ends or `timeout` passes; returns what arrived.
std::string receive_until(int fd, const std::string& part,
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
// Opens a connection to `endpoint` and returns its file descriptor.
int connect_to(const Endpoint& endpoint);

class ZeusdProcess {
  public:
    // Starts `zeusd serve ARGS` with the environment of this process plus
    // `env`; returns once the socket answers or throws with its log. A TCP
    // `wait_for` with port 0 (ARGS then bind port 0 too) waits for the
    // "listening on HOST:PORT" line instead and takes the port from it:
    // endpoint() has it. `fd_limit` sets its RLIMIT_NOFILE. `own_pid_namespace`:
    // zeusd runs as PID 1 of a new PID namespace (as in a pod without
    // hostPID), under a process of ours that passes SIGTERM on.
    ZeusdProcess(std::vector<std::string> args, std::map<std::string, std::string> env,
                 const std::filesystem::path& log_file, std::optional<Endpoint> wait_for,
                 std::optional<unsigned long> fd_limit = std::nullopt, bool own_pid_namespace = false);
    ~ZeusdProcess();
    ZeusdProcess(const ZeusdProcess&) = delete;
    ZeusdProcess& operator=(const ZeusdProcess&) = delete;

    // SIGTERM and wait; returns the exit status (or -signal).
    int stop();
    // SIGKILL and wait: a crash, with no chance to clean up.
    void kill9();
    [[nodiscard]] pid_t pid() const { return pid_; }
    // `wait_for` as given, with the port zeusd bound when it gave port 0.
    [[nodiscard]] const std::optional<Endpoint>& endpoint() const { return endpoint_; }
    [[nodiscard]] std::string log() const;

  private:
    pid_t pid_ = -1;
    std::filesystem::path log_file_;
    std::optional<Endpoint> endpoint_;
};

// Runs `zeusd ARGS` to completion, or kills it after `timeout`; returns
// {exit status (-signal when killed), stdout+stderr}.
std::pair<int, std::string> run_zeusd(const std::vector<std::string>& args,
                                      const std::map<std::string, std::string>& env = {},
                                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

// `zeus-sim burn` holding half of GPU `gpu`'s utilization for process `pid`
// (on the simulator state ZEUS_SIM_STATE names) until end() or destruction.
class SimBurn {
  public:
    SimBurn(unsigned gpu, pid_t pid);
    ~SimBurn();
    SimBurn(const SimBurn&) = delete;
    SimBurn& operator=(const SimBurn&) = delete;
    // SIGTERM, which ends the load cleanly, and wait.
    void end();

  private:
    pid_t burner_ = -1;
};

// Polls `condition` every 10 ms until it holds or `timeout` passes.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        ::usleep(10000);
    }
    return condition();
}

}  // namespace zeus::testing
