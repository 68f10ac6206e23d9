// zeusd: the privileged daemon. `zeusd serve` runs it; `zeusd token issue`
// prints a JWT for a user. Flags and defaults are the original daemon's
// (docs/zeusd.md), plus --control-users/--control-groups,
// --control-policy and --request-timeout-s.
#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "option_checks.hpp"
#include "zeus/platform/standard_descriptors.hpp"
#include "zeus/version.hpp"
#include "zeus/zeusd/commands.hpp"

namespace {

using namespace zeus::zeusd;

int fail(const zeus::Error& error) {
    fmt::print(stderr, "zeusd: {}\n", error.describe());
    return 1;
}

// Where and how clients reach the daemon.
void add_transport_options(CLI::App& serve, ServeOptions& config) {
    serve.add_option("--mode", config.mode, "Transport: uds (Unix domain socket) or tcp")
        ->check(CLI::IsMember({"uds", "tcp", "named-pipe"}))
        ->capture_default_str();
    serve.add_option("--socket-path", config.socket_path, "Unix socket path")->capture_default_str();
    serve.add_option("--socket-permissions", config.socket_permissions, "Unix socket mode, octal")
        ->capture_default_str();
    serve.add_option("--socket-uid", config.socket_uid, "Owner of the socket (user name or uid)");
    serve.add_option("--socket-gid", config.socket_gid, "Group of the socket (group name or gid)");
    serve
        .add_option("--tcp-bind-address", config.tcp_bind_address,
                    "IP:PORT to listen on with --mode tcp (port 0: one the system picks, named in the log)")
        ->capture_default_str();
    serve.add_option("--num-workers", config.num_workers, "Request threads (default: 2 x logical CPUs)")
        ->check(CLI::Range(1U, 1024U));
}

// What the daemon reads and controls, and how often.
void add_device_options(CLI::App& serve, ServeOptions& config, std::string& enable) {
    serve.add_option("--gpu-power-poll-hz", config.gpu_power_poll_hz, "GPU power stream polling rate")
        ->check(zeus::cli::finite_number(0.1, 1000.0, "Hz"))
        ->capture_default_str();
    serve
        .add_option("--cpu-power-poll-hz", config.cpu_power_poll_hz,
                    "CPU power stream polling rate (also the one-shot CPU power window)")
        ->check(zeus::cli::finite_number(0.1, 1000.0, "Hz"))
        ->capture_default_str();
    serve.add_option("--gpu-backend", config.gpu_backend, "auto, nvml or amdsmi")
        ->check(CLI::IsMember({"auto", "nvml", "amdsmi"}))
        ->capture_default_str();
    serve.add_option("--enable", enable,
                     "API groups to serve: gpu-control,gpu-read,cpu-read,metrics (default: all but metrics)");
    serve.add_option("--gpu-command-overrides", config.gpu_command_overrides,
                     "TOML file replacing GPU control commands (docs/zeusd-overrides.md)");
    // The attribution options only mean something with it: given alone, they are a forgotten --attribution.
    CLI::Option* attribution =
        serve.add_flag("--attribution", config.attribution,
                       "With the metrics group: also export each GPU's energy per workload (container, pod, Slurm job, "
                       "user) and the remainder, as `zeus exporter --attribution` (docs/attribution.md)");
    serve
        .add_option("--idle-policy", config.idle_policy,
                    "With --attribution: who gets a GPU's idle energy: unattributed (the remainder) or allocation "
                    "(the processes on it)")
        ->check(CLI::IsMember({"unattributed", "allocation"}))
        ->needs(attribution)
        ->capture_default_str();
    serve
        .add_option("--attribution-expiry", config.attribution_expiry_s,
                    "With --attribution: seconds after which a workload that gained no energy is dropped")
        ->check(zeus::cli::finite_number(1.0, 7.0 * 24 * 3600, "s"))
        ->needs(attribution)
        ->capture_default_str();
    serve
        .add_option("--kubelet-socket", config.kubelet_socket,
                    "With --attribution: the kubelet's PodResources socket, for the pod_namespace, pod_name and "
                    "container_name labels (default: /var/lib/kubelet/pod-resources/kubelet.sock); none: pod UIDs "
                    "only")
        ->needs(attribution);
    serve
        .add_option("--kubelet-timeout", config.kubelet_timeout_s,
                    "With --attribution: seconds the kubelet has to answer, per sweep")
        ->check(zeus::cli::finite_number(0.01, 60.0, "s"))
        ->needs(attribution)
        ->capture_default_str();
    serve.add_option("--restore-ledger", config.restore_ledger_path,
                     "File recording GPU changes to undo, kept across a crash (default: SOCKET.ledger.json, or "
                     "$RUNTIME_DIRECTORY or /run/zeusd/zeusd-tcp-PORT.ledger.json with --mode tcp, "
                     "zeusd-tcp-0-pidPID.ledger.json on port 0)");
}

// Who may do what, and how much of the daemon one client may hold.
void add_access_options(CLI::App& serve, ServeOptions& config) {
    serve.add_option("--signing-key-path", config.signing_key_path, "HMAC-SHA256 key file; enables JWT authentication");
    serve.add_option("--control-users", config.control_users,
                     "Only these users (names or uids, comma list) may use gpu-control (Unix socket only)");
    serve.add_option("--control-groups", config.control_groups,
                     "Only these groups (names or gids, comma list) may use gpu-control (Unix socket only)");
    serve
        .add_option("--control-policy", config.control_policy,
                    "Which GPUs a client may change: any, or owner: only a GPU that is idle or runs only processes "
                    "of the client's uid (over TCP: the local user its token names; root gets no exception)")
        ->check(CLI::IsMember({"any", "owner"}))
        ->capture_default_str();
    serve
        .add_option("--proc", config.proc_root,
                    "Where the host's /proc is (--control-policy owner and --attribution read who runs each GPU "
                    "process there)")
        ->capture_default_str();
    serve
        .add_option("--request-timeout-s", config.request_timeout_s,
                    "Seconds a client may take to send a request before it is dropped")
        ->check(zeus::cli::finite_number(0.05, 3600.0, "s"))
        ->capture_default_str();
    serve
        .add_option("--max-connections-per-peer", config.max_connections_per_peer,
                    "Open connections one user (Unix socket) or TCP address may have; more get a 503")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
        ->capture_default_str();
    serve
        .add_option("--max-streams-per-peer", config.max_streams_per_peer,
                    "Power streams one user (Unix socket) or TCP address may have open; more get a 503")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
        ->capture_default_str();
    serve
        .add_option("--max-queued-events", config.max_queued_events,
                    "Events a power stream keeps for a reader that falls behind (the oldest go first)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
        ->capture_default_str();
}

CLI::App* add_token_issue(CLI::App& app, TokenRequest& request) {
    auto* token = app.add_subcommand("token", "Manage JWT tokens");
    token->require_subcommand(1);
    auto* issue = token->add_subcommand("issue", "Print a signed token for a user");
    issue->add_option("--signing-key-path", request.signing_key_path, "The daemon's HMAC key file")->required();
    issue->add_option("--user", request.user, "Who the token is for (its sub claim)")->required();
    issue->add_option("--scope", request.scopes, "API groups granted, comma list: gpu-control,gpu-read,cpu-read")
        ->required();
    issue->add_option("--expires", request.expires, "Lifetime such as 7d, 12h, 30m; never or 0 for no expiry")
        ->capture_default_str();
    return issue;
}

}  // namespace

int main(int argc, char** argv) {
    zeus::occupy_closed_standard_descriptors();  // before any file is opened
    CLI::App app{"zeusd: GPU and CPU energy daemon, API-compatible with the original Zeus daemon"};
    app.set_version_flag("--version", std::string("zeusd ") + ZEUS_VERSION_STRING);
    app.require_subcommand(1);

    auto* serve = app.add_subcommand("serve", "Run the daemon");
    ServeOptions config;
    std::string enable;
    add_transport_options(*serve, config);
    add_device_options(*serve, config, enable);
    add_access_options(*serve, config);
    TokenRequest token_request;
    auto* issue = add_token_issue(app, token_request);

    CLI11_PARSE(app, argc, argv);

    if (issue->parsed()) {
        auto issued = issue_token(token_request);
        if (!issued) return fail(issued.error());
        std::cout << issued.value() << '\n';
        return 0;
    }

    if (serve->count("--enable") > 0) config.enable = enable;
    if (auto served = zeus::zeusd::serve(config); !served) return fail(served.error());
    return 0;
}
