#include "zeus/zeusd/commands.hpp"

#include <cmath>

#include "http_server/unix_socket.hpp"
#include "zeus/attribution/kubelet.hpp"
#include "zeusd/auth/token_issue.hpp"
#include "zeusd/daemon.hpp"
#include "zeusd/log.hpp"
#include "zeusd/serve_config.hpp"

namespace zeus::zeusd {

namespace {

// `field` = parse(text) when the flag was given (an empty text: it was not).
template <class Field, class Parse>
Status parse_given(const std::string& text, Parse&& parse, Field& field) {
    if (text.empty()) return {};
    auto parsed = parse(text);
    if (!parsed) return parsed.error();
    field = std::move(parsed).value();
    return {};
}

// Who names the pods of --attribution (--kubelet-socket): the kubelet's
// client, or nobody (pods keep their UIDs). By default the kubelet's usual
// socket, and a node without the kubelet client installed (the zeus package
// brings it) is a warning; a socket given by name must work.
Result<std::shared_ptr<attribution::PodResourcesSource>> pod_resources(const ServeOptions& options) {
    const std::string socket = options.kubelet_socket.value_or(attribution::kDefaultKubeletSocket);
    if (socket == "none") return std::shared_ptr<attribution::PodResourcesSource>();
    if (auto usable = attribution::check_kubelet_socket(socket); !usable) return usable.error();
    auto kubelet = attribution::open_kubelet_pod_resources(
        attribution::KubeletOptions{socket, std::chrono::milliseconds(std::llround(options.kubelet_timeout_s * 1000))});
    if (!kubelet && !options.kubelet_socket) {
        log::warn("--attribution: pods are named by UID only: {}", kubelet.error().describe());
        return std::shared_ptr<attribution::PodResourcesSource>();
    }
    return kubelet;
}

Result<ServeConfig> serve_config(const ServeOptions& options) {
    if (options.mode == "named-pipe") {
        return Error{ErrorCode::InvalidConfig, "--mode named-pipe exists only on Windows",
                     "use --mode uds or --mode tcp"};
    }
    ServeConfig config;
    config.mode = listen_mode(options.mode);
    config.socket_path = options.socket_path;
    config.tcp_bind_address = options.tcp_bind_address;
    config.num_workers = options.num_workers;
    config.gpu_power_poll_hz = options.gpu_power_poll_hz;
    config.cpu_power_poll_hz = options.cpu_power_poll_hz;
    config.gpu_backend = gpu_backend_choice(options.gpu_backend);
    config.gpu_command_overrides = options.gpu_command_overrides;
    config.signing_key_path = options.signing_key_path;
    config.restore_ledger_path = options.restore_ledger_path;
    config.request_timeout = request_timeout_ms(options.request_timeout_s);
    config.max_connections_per_peer = options.max_connections_per_peer;
    config.max_streams_per_peer = options.max_streams_per_peer;
    config.max_queued_events = options.max_queued_events;
    auto permissions = http_server::parse_socket_mode(options.socket_permissions);
    if (!permissions) {
        return Error{permissions.error().code, "--socket-permissions: " + permissions.error().message,
                     permissions.error().hint};
    }
    config.socket_permissions = permissions.value();
    if (auto parsed = parse_given(options.socket_uid, parse_user, config.socket_uid); !parsed) return parsed.error();
    if (auto parsed = parse_given(options.socket_gid, parse_group, config.socket_gid); !parsed) return parsed.error();
    if (options.enable) {
        auto groups = parse_api_groups(*options.enable);
        if (!groups) return groups.error();
        config.enable = groups.value();
    }
    if (auto parsed = parse_given(options.control_users, parse_users, config.control_users); !parsed) {
        return parsed.error();
    }
    if (auto parsed = parse_given(options.control_groups, parse_groups, config.control_groups); !parsed) {
        return parsed.error();
    }
    auto policy = parse_control_policy(options.control_policy);
    if (!policy) return policy.error();
    config.control_policy = policy.value();
    config.proc_root = options.proc_root;
    if (options.attribution) {
        auto idle_policy = attribution::parse_idle_policy(options.idle_policy);
        if (!idle_policy) {
            return Error{idle_policy.error().code, "--idle-policy: " + idle_policy.error().message,
                         idle_policy.error().hint};
        }
        metrics::AttributionOptions attribution;
        attribution.idle_policy = idle_policy.value();
        attribution.expiry = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(options.attribution_expiry_s));
        attribution.proc_root = options.proc_root;
        auto pods = pod_resources(options);
        if (!pods) return pods.error();
        attribution.pod_resources = std::move(pods).value();
        config.attribution = attribution;
    }
    return config;
}

}  // namespace

Status serve(const ServeOptions& options) {
    log::configure_from_environment();
    auto config = serve_config(options);
    if (!config) return config.error();
    auto daemon = Daemon::start(config.value());
    if (!daemon) return daemon.error();
    daemon.value()->run_until_signal();
    return {};
}

Result<std::string> issue_token(const TokenRequest& request) {
    return issue_token(request.signing_key_path, request.user, request.scopes, request.expires, unix_now());
}

}  // namespace zeus::zeusd
