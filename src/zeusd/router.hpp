// Turns a request into a response: access checks (API groups, tokens,
// control allow-lists), then the route. Answers through a callback because
// control commands and CPU power samples finish later, off the request
// thread. No sockets here: tests and the fuzzer drive it directly.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "zeusd/api_group.hpp"
#include "zeusd/auth/jwt.hpp"
#include "zeusd/cpu_fleet.hpp"
#include "zeusd/gpu_fleet.hpp"
#include "zeusd/gpu_ownership.hpp"
#include "zeusd/http_types.hpp"
#include "zeusd/metrics_group.hpp"
#include "zeusd/power_streams.hpp"

namespace zeus::zeusd {

// On a 200 to a set_* control request: when zeusd will undo the change
// ("undone when client pid 4242 exits ...; add persist=true ...").
inline constexpr std::string_view kRestoreHeader = "Zeusd-Restore";

struct RouterOptions {
    ApiGroups enabled;
    // HMAC key for JWT bearer tokens; nullopt = authentication off.
    std::optional<std::string> signing_key;
    // One-shot CPU power: the time between the two energy readings.
    std::chrono::microseconds cpu_power_window{100000};
    // When either is non-empty, only these users/groups may use gpu-control.
    std::set<uid_t> control_users;
    std::set<gid_t> control_groups;
    // What GET /metrics serves when the metrics group is on (zeusd/metrics_group.hpp).
    const MetricsGroup* metrics = nullptr;
    // --control-policy owner: who uses a GPU decides who may change it
    // (zeusd/gpu_ownership.hpp); null: any GPU (--control-policy any).
    const GpuOwnership* ownership = nullptr;
};

class Router {
  public:
    // `gpus`/`cpus` may be null when their groups are off. `identify_client`
    // hears about every client that changes something (to watch its process)
    // and names the client its changes are recorded under (0: none, undone
    // only when zeusd stops); without it, the peer's pid.
    // `streams` feeds the event streams the router accepts (null: they end at once).
    Router(RouterOptions options, GpuFleet* gpus, CpuFleet* cpus, boost::asio::any_io_executor executor,
           std::function<ClientId(const Peer&)> identify_client = {}, PowerStreams* streams = nullptr);

    void handle(const Request& request, const Peer& peer, Respond respond) const;

    [[nodiscard]] const RouterOptions& options() const { return options_; }

  private:
    struct Context;
    using Handler = void (Router::*)(Context&) const;


    void discover(Context& context) const;
    void time(Context& context) const;
    void whoami(Context& context) const;
    void gpu_control(Context& context) const;
    // gpu_control's steps: the command and GPUs the query names (nullopt:
    // answered with the query's error), the allow-list and the owner policy
    // (false: answered 403), and the submission to the GPUs' control lanes.
    struct GpuControlRequest;
    [[nodiscard]] std::optional<GpuControlRequest> parse_gpu_control(Context& context) const;
    [[nodiscard]] bool control_allowed(Context& context) const;
    // The owner policy over every GPU the request names (false: answered 403,
    // no GPU changed).
    [[nodiscard]] bool owner_allows(Context& context, const GpuControlRequest& request) const;
    void submit_gpu_control(Context& context, const GpuControlRequest& request, ClientId client) const;
    void gpu_read(Context& context) const;
    void gpu_stream(Context& context) const;
    void cpu_energy(Context& context) const;
    void cpu_power(Context& context) const;
    void cpu_stream(Context& context) const;
    void metrics(Context& context) const;
    // 0 when cpu-read is served without CPUs (no RAPL on this machine).
    [[nodiscard]] std::size_t cpu_count() const;

    RouterOptions options_;
    GpuFleet* gpus_;
    CpuFleet* cpus_;
    PowerStreams* streams_;
    boost::asio::any_io_executor executor_;
    std::function<ClientId(const Peer&)> identify_client_;
};

// HTTP status for a device error: permission 403, bad input or unsupported 400, else 500.
[[nodiscard]] http::status status_for(const Error& error);

}  // namespace zeus::zeusd
