// `zeusd serve`'s settings: the original's flags and defaults (§5.1 of the
// inventory) plus our additions (control allow-lists, request timeout).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>

#include "http_server/server.hpp"
#include "zeus/platform/error.hpp"
#include "zeusd/api_group.hpp"

namespace zeus::zeusd {

enum class ListenMode { UnixSocket, Tcp };
enum class GpuBackendChoice { Auto, Nvml, AmdSmi };

struct ServeConfig {
    ListenMode mode = ListenMode::UnixSocket;
    std::string socket_path = "/run/zeusd/zeusd.sock";
    mode_t socket_permissions = 0666;
    std::optional<uid_t> socket_uid;
    std::optional<gid_t> socket_gid;
    std::string tcp_bind_address = "127.0.0.1:4938";
    unsigned num_workers = 0;  // 0: logical CPUs + 1
    double gpu_power_poll_hz = 20.0;
    double cpu_power_poll_hz = 10.0;
    GpuBackendChoice gpu_backend = GpuBackendChoice::Auto;
    std::optional<ApiGroups> enable;  // nullopt: the default for what is found
    std::optional<std::string> gpu_command_overrides;
    std::optional<std::string> signing_key_path;
    std::set<uid_t> control_users;
    std::set<gid_t> control_groups;
    std::chrono::milliseconds request_timeout{30000};
    // What one peer (a Unix-socket user, or a TCP client address) may hold:
    // open connections, event streams, and events queued on each stream
    // for a reader that falls behind (the oldest are dropped beyond it).
    std::size_t max_connections_per_peer = http_server::ServerLimits{}.max_connections_per_peer;
    std::size_t max_streams_per_peer = http_server::ServerLimits{}.max_event_streams_per_peer;
    std::size_t max_queued_events = http_server::ServerLimits{}.max_queued_events;
    // Where clients' GPU changes are recorded before they are applied, so a
    // crashed zeusd's successor can undo them; nullopt: default_ledger_path().
    std::optional<std::string> restore_ledger_path;
};

// Next to the socket ("SOCKET.ledger.json"); for TCP in $RUNTIME_DIRECTORY
// (systemd's RuntimeDirectory) or /run/zeusd, named by the port.
[[nodiscard]] std::string default_ledger_path(const ServeConfig& config);

// Users and groups by name or number ("alice,1001"); unknown names are
// InvalidConfig errors naming them.
[[nodiscard]] Result<std::set<uid_t>> parse_users(const std::string& list);
[[nodiscard]] Result<std::set<gid_t>> parse_groups(const std::string& list);
[[nodiscard]] Result<uid_t> parse_user(const std::string& text);
[[nodiscard]] Result<gid_t> parse_group(const std::string& text);

}  // namespace zeus::zeusd
