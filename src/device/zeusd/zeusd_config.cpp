// ZeusdConfig: where the daemon is, from code or from the environment
// variables the original client reads (ZEUSD_SOCK_PATH, ZEUSD_HOST_PORT,
// ZEUSD_TOKEN), with errors that name the variable and the fix.
#include <fmt/format.h>
#include <sys/un.h>

#include <charconv>

#include "zeus/device/zeusd_client.hpp"
#include "device/zeusd/zeusd_client_internal.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus {
namespace {

// Empty values count as unset, as for every other variable Zeus reads: a
// shell's `export ZEUSD_TOKEN=` should not send "Bearer ".
std::optional<std::string> non_empty_env(const char* name) {
    auto value = get_env(name);
    if (!value || value->empty()) return std::nullopt;
    return value;
}

Error host_port_error(std::string_view variable, std::string_view value, std::string_view problem) {
    return Error{ErrorCode::InvalidConfig, fmt::format("{}=\"{}\" {}", variable, value, problem),
                 fmt::format("set {} to the daemon's host:port, e.g. 127.0.0.1:4938 (zeusd's default "
                             "--tcp-bind-address) or [::1]:4938, or unset it (ZEUSD_SOCK_PATH selects a Unix socket)",
                             variable),
                 0};
}

Result<std::uint16_t> parse_port(std::string_view variable, std::string_view value, std::string_view port) {
    unsigned parsed = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), parsed);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size()) {
        return host_port_error(variable, value, fmt::format("has port \"{}\", which is not a number", port));
    }
    if (parsed == 0 || parsed > 65535) {
        return host_port_error(variable, value, fmt::format("has port {}, outside 1-65535", parsed));
    }
    return static_cast<std::uint16_t>(parsed);
}

}  // namespace

std::string_view to_string(ZeusdApiGroup group) {
    switch (group) {
        case ZeusdApiGroup::GpuControl: return "gpu-control";
        case ZeusdApiGroup::GpuRead: return "gpu-read";
        case ZeusdApiGroup::CpuRead: return "cpu-read";
    }
    return "unknown";
}

ZeusdConfig ZeusdConfig::unix_socket(std::string path, std::optional<std::string> token) {
    ZeusdConfig config;
    config.transport = Transport::UnixSocket;
    config.socket_path = std::move(path);
    config.token = std::move(token);
    return config;
}

ZeusdConfig ZeusdConfig::tcp(std::string host, std::uint16_t port, std::optional<std::string> token) {
    ZeusdConfig config;
    config.transport = Transport::Tcp;
    config.host = std::move(host);
    config.port = port;
    config.token = std::move(token);
    return config;
}

std::string ZeusdConfig::endpoint() const {
    if (transport == Transport::UnixSocket) return "unix:" + socket_path;
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

std::string ZeusdConfig::as_environment() const {
    if (transport == Transport::UnixSocket) return "ZEUSD_SOCK_PATH=" + socket_path;
    return "ZEUSD_HOST_PORT=" + endpoint();
}

Result<ZeusdConfig> parse_zeusd_host_port(std::string_view value, std::string_view variable) {
    std::string_view host;
    std::string_view port;
    if (value.find("://") != std::string_view::npos) {
        return host_port_error(variable, value, "is a URL; give only host:port, without the scheme");
    }
    if (value.starts_with('[')) {  // [v6]:port, as in URLs
        const auto close = value.find(']');
        if (close == std::string_view::npos || close + 1 >= value.size() || value[close + 1] != ':') {
            return host_port_error(variable, value, "is not [IPv6 address]:port");
        }
        host = value.substr(1, close - 1);
        port = value.substr(close + 2);
    } else {
        const auto colon = value.rfind(':');
        if (colon == std::string_view::npos) return host_port_error(variable, value, "has no port (expected host:port)");
        host = value.substr(0, colon);
        port = value.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) {
            return host_port_error(variable, value, "looks like an IPv6 address without brackets");
        }
    }
    if (host.empty()) return host_port_error(variable, value, "has no host (expected host:port)");
    if (host.find_first_of(" /?#@") != std::string_view::npos) {
        return host_port_error(variable, value, fmt::format("has host \"{}\", which is not a host name or address", host));
    }
    auto parsed_port = parse_port(variable, value, port);
    if (!parsed_port) return parsed_port.error();
    return ZeusdConfig::tcp(std::string(host), *parsed_port);
}

Result<std::optional<ZeusdConfig>> ZeusdConfig::from_environment() {
    auto token = non_empty_env("ZEUSD_TOKEN");
    if (token && token->find_first_of("\r\n") != std::string::npos) {
        return Error{ErrorCode::InvalidConfig, "ZEUSD_TOKEN contains a line break",
                     "set ZEUSD_TOKEN to the token `zeusd token issue` printed, on one line", 0};
    }
    if (auto path = non_empty_env("ZEUSD_SOCK_PATH")) {
        // sockaddr_un holds the path; a longer one cannot be connected to at all.
        if (path->size() >= sizeof(sockaddr_un::sun_path)) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("ZEUSD_SOCK_PATH=\"{}\" is {} bytes long; Unix socket paths must be shorter than {}",
                                     *path, path->size(), sizeof(sockaddr_un::sun_path)),
                         "start zeusd with a shorter --socket-path and point ZEUSD_SOCK_PATH at it", 0};
        }
        return std::optional<ZeusdConfig>(unix_socket(std::move(*path), std::move(token)));
    }
    if (auto host_port = non_empty_env("ZEUSD_HOST_PORT")) {
        auto config = parse_zeusd_host_port(*host_port);
        if (!config) return config.error();
        ZeusdConfig result = std::move(config).value();
        result.token = std::move(token);
        return std::optional<ZeusdConfig>(std::move(result));
    }
    return std::optional<ZeusdConfig>();
}

HttpEndpoint zeusd_endpoint(const ZeusdConfig& config) {
    HttpEndpoint endpoint;
    if (config.transport == ZeusdConfig::Transport::UnixSocket) {
        // The host part is ignored on a Unix socket; the original client uses localhost too.
        endpoint.base_url = "http://localhost";
        endpoint.unix_socket_path = config.socket_path;
    } else {
        endpoint.base_url = "http://" + config.endpoint();
    }
    endpoint.name = "zeusd at " + config.endpoint();
    const std::string environment = config.as_environment();
    endpoint.unreachable_fix = fmt::format(
        "start zeusd (`zeusd serve`, or `systemctl start zeusd`) or point {} at the running daemon; unset it to use "
        "the devices directly",
        environment.substr(0, environment.find('=')));
    endpoint.timeout_fix =
        "the daemon did not answer in time; check that it is healthy (its log, `systemctl status zeusd`)";
    if (config.token) endpoint.headers.push_back("Authorization: Bearer " + *config.token);
    endpoint.headers.emplace_back("Accept: application/json");
    endpoint.connect_timeout = config.connect_timeout;
    return endpoint;
}

}  // namespace zeus
