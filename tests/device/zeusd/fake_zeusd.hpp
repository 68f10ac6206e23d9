// A small stand-in for zeusd, in-process on the project's HTTP server
// component (src/http_server): it answers the original daemon's routes with
// their JSON shapes, status codes and error bodies (zeus-inventory §5.2-§5.3)
// on a temporary Unix socket (or a TCP port on 127.0.0.1), and records every
// request it gets so tests can assert the exact requests a client sends. Its
// event streams (GET /gpu/stream_power, /cpu/stream_power) send what the test
// publishes, and it can stop and listen again at the same address.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/zeusd_client.hpp"

namespace zeus::testing {

struct RecordedRequest {
    int connection = 0;  // the fake's number for the TCP/Unix connection it came on
    std::string method;
    std::string path;
    std::string query;                          // raw, as sent
    std::map<std::string, std::string> params;  // parsed
    std::vector<std::string> param_names;       // in the order sent
    std::map<std::string, std::string> headers; // names lower case
    std::string body;
};

class FakeZeusd {
  public:
    enum class Listen { UnixSocket, Tcp };

    // A daemon with two GPUs (ids 0, 1), two CPUs (0 with DRAM, 1 without),
    // every group enabled and no auth; tests change what they need. Further
    // keys: "tokens" (token -> {sub, scopes, exp?, expired?}), "responses"
    // ("METHOD /path" -> {status, body, content_type?}: answered as given),
    // "discover_raw", "power_limit_mw", "cpu_start_uj", "cpu_step_uj" and
    // "cpu_restart_at_read" (that CPU read sees counters started over).
    static nlohmann::json default_config();

    explicit FakeZeusd(const nlohmann::json& config = default_config(), Listen listen = Listen::UnixSocket);
    FakeZeusd(const FakeZeusd&) = delete;
    FakeZeusd& operator=(const FakeZeusd&) = delete;
    ~FakeZeusd();

    [[nodiscard]] ZeusdConfig client_config(std::optional<std::string> token = std::nullopt) const;
    // "ZEUSD_SOCK_PATH=<path>" or "ZEUSD_HOST_PORT=127.0.0.1:<port>", for a child's environment.
    [[nodiscard]] std::string environment() const;
    [[nodiscard]] const std::filesystem::path& socket_path() const { return socket_; }

    [[nodiscard]] std::vector<RecordedRequest> requests() const;
    // Only those to `path`.
    [[nodiscard]] std::vector<RecordedRequest> requests(const std::string& path) const;
    void clear_requests() const;

    // Sends `data` as one event (`data: <data>\n\n`) to every client streaming
    // `path` ("/gpu/stream_power" or "/cpu/stream_power") now.
    void publish(const std::string& path, const std::string& data) const;
    // How many clients stream `path` now.
    [[nodiscard]] std::size_t subscribers(const std::string& path) const;
    // As a daemon that exits: the listener and every connection close.
    void stop();
    // Listens again at the same socket path or port, with the same configuration and fresh state.
    void restart();

  private:
    class Daemon;

    void open_listener();

    nlohmann::json config_;
    std::filesystem::path dir_;
    std::filesystem::path socket_;
    Listen listen_;
    std::uint16_t port_ = 0;
    std::unique_ptr<Daemon> daemon_;
};

}  // namespace zeus::testing
