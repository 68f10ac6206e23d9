// Runs tests/zeusd_backend/fake_zeusd.py as a real process on a temporary Unix
// socket (or a TCP port on 127.0.0.1) and reads back the requests it got.
#pragma once

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <filesystem>
#include <map>
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
    // every group enabled and no auth; tests change what they need.
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

  private:
    std::filesystem::path dir_;
    std::filesystem::path socket_;
    std::filesystem::path log_;
    Listen listen_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace zeus::testing
