// zeusd's two commands as library entry points: `zeusd serve` (the daemon,
// until a signal) and `zeusd token issue`. apps/zeusd turns the command line
// into these options; every check of their values and the daemon itself
// live in the library (src/zeusd/). docs/zeusd.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

// Every default of `zeusd serve`, once: the original daemon's (§5.1 of the
// inventory) and ours. ServeOptions starts from them, and so does the
// daemon's own configuration; the connection limits are also the HTTP
// server component's (checked where both are seen).
struct ServeDefaults {
    static constexpr std::string_view mode = "uds";
    static constexpr std::string_view socket_path = "/run/zeusd/zeusd.sock";
    static constexpr std::string_view socket_permissions = "666";  // octal
    static constexpr std::string_view tcp_bind_address = "127.0.0.1:4938";
    static constexpr unsigned num_workers = 0;  // 2 x logical CPUs
    static constexpr double gpu_power_poll_hz = 20.0;
    static constexpr double cpu_power_poll_hz = 10.0;
    static constexpr std::string_view gpu_backend = "auto";
    static constexpr double request_timeout_s = 30.0;
    static constexpr std::size_t max_connections_per_peer = 256;
    static constexpr std::size_t max_streams_per_peer = 16;
    static constexpr std::size_t max_queued_events = 32;
    static constexpr std::string_view control_policy = "any";
    static constexpr std::string_view proc_root = "/proc";
    static constexpr std::string_view idle_policy = "unattributed";
    static constexpr double attribution_expiry_s = 600.0;
    static constexpr double kubelet_timeout_s = 1.0;
};

// `zeusd serve`'s flags as given, starting from ServeDefaults. The texts are
// checked by serve(); each error names its flag and the fix.
struct ServeOptions {
    std::string mode{ServeDefaults::mode};  // uds or tcp (named-pipe exists only on Windows)
    std::string socket_path{ServeDefaults::socket_path};
    std::string socket_permissions{ServeDefaults::socket_permissions};  // octal
    std::string socket_uid;                                             // user name or uid; empty: the daemon's
    std::string socket_gid;                                             // group name or gid; empty: the daemon's
    std::string tcp_bind_address{ServeDefaults::tcp_bind_address};
    unsigned num_workers = ServeDefaults::num_workers;  // 0: 2 x logical CPUs
    double gpu_power_poll_hz = ServeDefaults::gpu_power_poll_hz;
    double cpu_power_poll_hz = ServeDefaults::cpu_power_poll_hz;
    std::string gpu_backend{ServeDefaults::gpu_backend};  // auto, nvml or amdsmi
    std::optional<std::string> enable;  // API groups, comma list; nullopt: the default for what is found
    std::optional<std::string> gpu_command_overrides;
    std::optional<std::string> signing_key_path;
    std::string control_users;   // names or uids, comma list; empty: no allow-list
    std::string control_groups;  // names or gids, comma list; empty: no allow-list
    // any: whoever may use gpu-control changes any GPU; owner: only a GPU
    // that is idle or runs only the client's own processes (docs/zeusd.md).
    std::string control_policy{ServeDefaults::control_policy};
    std::string proc_root{ServeDefaults::proc_root};  // the host's /proc (owner policy, attribution)
    // The metrics group's per-workload GPU energy, as `zeus exporter
    // --attribution` (docs/attribution.md); needs --enable ...,metrics.
    bool attribution = false;
    std::string idle_policy{ServeDefaults::idle_policy};  // unattributed or allocation
    double attribution_expiry_s = ServeDefaults::attribution_expiry_s;
    // The kubelet's PodResources socket, for pod names (as `zeus exporter
    // --kubelet-socket`), or "none"; nullopt: the kubelet's usual socket, and
    // a kubelet client that is not installed leaves pods named by UID.
    std::optional<std::string> kubelet_socket;
    double kubelet_timeout_s = ServeDefaults::kubelet_timeout_s;
    std::optional<std::string> restore_ledger_path;
    double request_timeout_s = ServeDefaults::request_timeout_s;
    // What one peer (a Unix-socket user, or a TCP client address) may hold.
    std::size_t max_connections_per_peer = ServeDefaults::max_connections_per_peer;
    std::size_t max_streams_per_peer = ServeDefaults::max_streams_per_peer;
    std::size_t max_queued_events = ServeDefaults::max_queued_events;
};

// Configures logging from RUST_LOG, checks the options, starts the daemon
// and serves until a stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT), then
// puts back every GPU setting a client changed. An error names the flag or device at fault.
[[nodiscard]] Status serve(const ServeOptions& options);

// `zeusd token issue`: an HS256 JWT for `user` granting `scopes` (a comma
// list of API groups), signed with the key file the daemon loads, expiring
// after `expires` from now (7d, 12h, 30m; never or 0 for no expiry).
struct TokenRequest {
    std::string signing_key_path;
    std::string user;
    std::string scopes;
    std::string expires = "never";
};
[[nodiscard]] Result<std::string> issue_token(const TokenRequest& request);

}  // namespace zeus::zeusd
