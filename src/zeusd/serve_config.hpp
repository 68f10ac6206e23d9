// `zeusd serve`'s settings: the original's flags plus our additions (control
// allow-lists, request timeout, connection limits), checked and parsed, with
// the defaults of the public ServeDefaults (zeus/zeusd/commands.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "http_server/server.hpp"
#include "zeus/metrics/device_metrics.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/zeusd/commands.hpp"
#include "zeusd/api_group.hpp"
#include "zeusd/gpu_ownership.hpp"

namespace zeus::zeusd {

enum class ListenMode { UnixSocket, Tcp };
enum class GpuBackendChoice { Auto, Nvml, AmdSmi };

// What the texts of --mode, --gpu-backend and --request-timeout-s mean (the
// command line has checked them); constexpr, so the defaults below are ServeDefaults'.
[[nodiscard]] constexpr ListenMode listen_mode(std::string_view mode) {
    return mode == "tcp" ? ListenMode::Tcp : ListenMode::UnixSocket;
}
[[nodiscard]] constexpr GpuBackendChoice gpu_backend_choice(std::string_view backend) {
    if (backend == "nvml") return GpuBackendChoice::Nvml;
    if (backend == "amdsmi") return GpuBackendChoice::AmdSmi;
    return GpuBackendChoice::Auto;
}
[[nodiscard]] constexpr std::chrono::milliseconds request_timeout_ms(double seconds) {
    return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}
// Octal digits ("666"); the defaults' only, user input goes through http_server::parse_socket_mode.
[[nodiscard]] constexpr mode_t octal_mode(std::string_view digits) {
    mode_t mode = 0;
    for (const char digit : digits) mode = mode * 8 + static_cast<mode_t>(digit - '0');
    return mode;
}

// The public connection-limit defaults are the HTTP server component's.
static_assert(ServeDefaults::max_connections_per_peer == http_server::ServerLimits{}.max_connections_per_peer);
static_assert(ServeDefaults::max_streams_per_peer == http_server::ServerLimits{}.max_event_streams_per_peer);
static_assert(ServeDefaults::max_queued_events == http_server::ServerLimits{}.max_queued_events);

struct ServeConfig {
    ListenMode mode = listen_mode(ServeDefaults::mode);
    std::string socket_path{ServeDefaults::socket_path};
    mode_t socket_permissions = octal_mode(ServeDefaults::socket_permissions);
    std::optional<uid_t> socket_uid;
    std::optional<gid_t> socket_gid;
    std::string tcp_bind_address{ServeDefaults::tcp_bind_address};
    unsigned num_workers = ServeDefaults::num_workers;  // 0: 2 x logical CPUs
    double gpu_power_poll_hz = ServeDefaults::gpu_power_poll_hz;
    double cpu_power_poll_hz = ServeDefaults::cpu_power_poll_hz;
    GpuBackendChoice gpu_backend = gpu_backend_choice(ServeDefaults::gpu_backend);
    std::optional<ApiGroups> enable;  // nullopt: the default for what is found
    std::optional<std::string> gpu_command_overrides;
    std::optional<std::string> signing_key_path;
    std::set<uid_t> control_users;
    std::set<gid_t> control_groups;
    ControlPolicy control_policy = ControlPolicy::Any;
    std::string proc_root{ServeDefaults::proc_root};
    // The metrics group's attribution series; nullopt: off.
    std::optional<metrics::AttributionOptions> attribution;
    std::chrono::milliseconds request_timeout = request_timeout_ms(ServeDefaults::request_timeout_s);
    // What one peer (a Unix-socket user, or a TCP client address) may hold:
    // open connections, event streams, and events queued on each stream
    // for a reader that falls behind (the oldest are dropped beyond it).
    std::size_t max_connections_per_peer = ServeDefaults::max_connections_per_peer;
    std::size_t max_streams_per_peer = ServeDefaults::max_streams_per_peer;
    std::size_t max_queued_events = ServeDefaults::max_queued_events;
    // Where clients' GPU changes are recorded before they are applied, so a
    // crashed zeusd's successor can undo them; nullopt: default_ledger_path().
    std::optional<std::string> restore_ledger_path;
};

// Next to the socket ("SOCKET.ledger.json"); for TCP in $RUNTIME_DIRECTORY
// (systemd's RuntimeDirectory) or /run/zeusd, named by the port, or with
// port 0 by the process ("zeusd-tcp-0-pidPID.ledger.json"): one file per
// daemon, which no successor finds.
[[nodiscard]] std::string default_ledger_path(const ServeConfig& config);

// Users and groups by name or number ("alice,1001"); unknown names are
// InvalidConfig errors naming them.
[[nodiscard]] Result<std::set<uid_t>> parse_users(const std::string& list);
[[nodiscard]] Result<std::set<gid_t>> parse_groups(const std::string& list);
[[nodiscard]] Result<uid_t> parse_user(const std::string& text);
[[nodiscard]] Result<gid_t> parse_group(const std::string& text);

}  // namespace zeus::zeusd
