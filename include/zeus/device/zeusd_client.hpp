// The client side of zeusd, the privileged daemon that reads RAPL and changes
// GPU settings for unprivileged processes. It speaks the original daemon's
// HTTP API (reference: zeus-inventory §5.3) over a Unix socket or TCP, exactly
// as the original Python client does (§5.8): the same routes, query
// parameters and `Authorization: Bearer` header, so it works against the
// original daemon and ours alike.
//
// Nothing here throws for daemon problems: an unreachable daemon, a refused
// request or an unexpected answer is an Error naming the endpoint, the route,
// the HTTP status and the daemon's own words, with the fix.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

// The daemon's API groups; each route belongs to one (§5.2).
enum class ZeusdApiGroup { GpuControl, GpuRead, CpuRead };
// "gpu-control", "gpu-read", "cpu-read": the daemon's own spelling.
[[nodiscard]] std::string_view to_string(ZeusdApiGroup group);

struct ZeusdConfig {
    enum class Transport { UnixSocket, Tcp };
    Transport transport = Transport::UnixSocket;
    std::string socket_path;  // Transport::UnixSocket
    std::string host;         // Transport::Tcp: a name, an IPv4 address or an IPv6 address (no brackets)
    std::uint16_t port = 0;   // Transport::Tcp
    // Sent as `Authorization: Bearer <token>` on every request when set.
    std::optional<std::string> token;
    // Connecting is local and fast; requests are bounded so a wedged daemon
    // cannot hang a measurement. Control requests run the change on the
    // device (or a configured override command, 60 s by default in zeusd)
    // before answering, hence the longer bound.
    std::chrono::milliseconds connect_timeout{5'000};
    std::chrono::milliseconds read_timeout{15'000};
    std::chrono::milliseconds control_timeout{75'000};

    [[nodiscard]] static ZeusdConfig unix_socket(std::string path, std::optional<std::string> token = std::nullopt);
    [[nodiscard]] static ZeusdConfig tcp(std::string host, std::uint16_t port,
                                         std::optional<std::string> token = std::nullopt);

    // ZEUSD_SOCK_PATH (wins when both are set), else ZEUSD_HOST_PORT
    // ("host:port", "[v6]:port"), plus ZEUSD_TOKEN. nullopt when neither
    // endpoint variable is set (empty counts as unset); a malformed value is
    // an InvalidConfig error naming the variable and the fix.
    [[nodiscard]] static Result<std::optional<ZeusdConfig>> from_environment();

    // "unix:/run/zeusd/zeusd.sock" or "127.0.0.1:4938" (IPv6 in brackets).
    [[nodiscard]] std::string endpoint() const;
    // The variable a user sets to reach this endpoint, for messages:
    // "ZEUSD_SOCK_PATH=/run/zeusd/zeusd.sock" or "ZEUSD_HOST_PORT=host:port".
    [[nodiscard]] std::string as_environment() const;
};

// Parses a ZEUSD_HOST_PORT value. `variable` names the source in errors.
[[nodiscard]] Result<ZeusdConfig> parse_zeusd_host_port(std::string_view value,
                                                         std::string_view variable = "ZEUSD_HOST_PORT");

// GET /discover.
struct ZeusdGpuInfo {
    unsigned id = 0;  // the daemon's index (NVML's index for NVIDIA GPUs)
    std::string name;
    std::string pci_address;  // "0000:01:00.0"
    bool cumulative_energy_available = false;
};
struct ZeusdCpuInfo {
    unsigned id = 0;
    bool dram_available = false;
};
struct ZeusdDiscovery {
    std::vector<ZeusdGpuInfo> gpus;
    std::vector<ZeusdCpuInfo> cpus;
    std::vector<std::string> enabled_api_groups;  // as the daemon spells them
    bool auth_required = false;
    std::optional<std::string> version;  // only when the daemon says (the original does not)
};

// GET /auth/whoami: who this token belongs to.
struct ZeusdIdentity {
    std::string sub;
    std::vector<std::string> scopes;
    std::optional<std::chrono::system_clock::time_point> expires;  // nullopt: never
};

struct ZeusdGpuPower {
    std::chrono::system_clock::time_point timestamp;
    std::map<unsigned, Milliwatts> power;
};

// Cumulative since the daemon started reading (its counters are 64-bit and
// wrap-corrected). nullopt when not requested or, for DRAM, unavailable.
struct ZeusdCpuEnergy {
    std::optional<Microjoules> cpu;
    std::optional<Microjoules> dram;
};

struct ZeusdCpuPowerReading {
    Milliwatts cpu;
    std::optional<Milliwatts> dram;
};
struct ZeusdCpuPower {
    std::chrono::system_clock::time_point timestamp;
    std::map<unsigned, ZeusdCpuPowerReading> power;
};

// What a caller needs from the daemon (the original's require_capabilities).
struct ZeusdRequirements {
    bool read_gpu = false;
    bool control_gpu = false;
    bool read_cpu = false;
    std::vector<unsigned> gpu_ids{};  // must exist on the daemon
    std::vector<unsigned> cpu_ids{};
};

class ZeusdClient {
  public:
    // GET /discover, then GET /auth/whoami when the daemon requires auth and
    // a token is configured. Fails when the daemon cannot be reached, does
    // not answer 200, or answers without the fields this client needs (an
    // older daemon). An auth problem (no token, token refused) does not
    // fail: it is kept in auth_error(), and require() reports it, so that a
    // diagnostic can still show what the daemon offers.
    [[nodiscard]] static Result<std::shared_ptr<ZeusdClient>> connect(ZeusdConfig config);

    ZeusdClient(const ZeusdClient&) = delete;
    ZeusdClient& operator=(const ZeusdClient&) = delete;
    ~ZeusdClient();

    [[nodiscard]] const ZeusdConfig& config() const { return config_; }
    [[nodiscard]] const ZeusdDiscovery& discovery() const { return discovery_; }
    [[nodiscard]] bool auth_required() const { return discovery_.auth_required; }
    // Set when auth is required and there is no token or it was refused.
    [[nodiscard]] const std::optional<Error>& auth_error() const { return auth_error_; }
    // This token's user and scopes; set when auth is required and the token was accepted.
    [[nodiscard]] const std::optional<ZeusdIdentity>& identity() const { return identity_; }

    [[nodiscard]] bool group_enabled(ZeusdApiGroup group) const;
    // Whether this client may use the group: no auth, or a token with that scope.
    [[nodiscard]] bool scope_granted(ZeusdApiGroup group) const;
    // Group enabled and scope granted (and no auth error).
    [[nodiscard]] bool can(ZeusdApiGroup group) const;
    [[nodiscard]] bool can_read_gpu() const { return can(ZeusdApiGroup::GpuRead); }
    [[nodiscard]] bool can_control_gpu() const { return can(ZeusdApiGroup::GpuControl); }
    [[nodiscard]] bool can_read_cpu() const { return can(ZeusdApiGroup::CpuRead); }
    // OK, or NoPermission (auth problem, group disabled, scope missing) /
    // NotFound (ids the daemon lacks) listing everything missing and the fixes.
    [[nodiscard]] Status require(const ZeusdRequirements& needs) const;

    // GPU control (POST, gpu-control). With `block`, the daemon answers after
    // the change was made on every listed GPU (per-GPU failures come back);
    // without, it only queues them. Ids must not be empty.
    Status set_power_limit(const std::vector<unsigned>& gpu_ids, Milliwatts limit, bool block);
    Status set_persistence_mode(const std::vector<unsigned>& gpu_ids, bool enabled, bool block);
    Status set_gpu_locked_clocks(const std::vector<unsigned>& gpu_ids, Megahertz min, Megahertz max, bool block);
    Status reset_gpu_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block);
    Status set_memory_locked_clocks(const std::vector<unsigned>& gpu_ids, Megahertz min, Megahertz max, bool block);
    Status reset_memory_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block);
    Status reset_locked_clocks(const std::vector<unsigned>& gpu_ids, bool block);

    // GPU reads (GET, gpu-read). Empty ids: every GPU of the daemon. Every
    // requested id must be in the answer, or it is an error.
    [[nodiscard]] Result<std::map<unsigned, Millijoules>> gpu_energy(const std::vector<unsigned>& gpu_ids = {});
    [[nodiscard]] Result<ZeusdGpuPower> gpu_power(const std::vector<unsigned>& gpu_ids = {});
    [[nodiscard]] Result<std::map<unsigned, Milliwatts>> power_limit(const std::vector<unsigned>& gpu_ids = {});
    [[nodiscard]] Result<std::map<unsigned, std::pair<Milliwatts, Milliwatts>>> power_limit_constraints(
        const std::vector<unsigned>& gpu_ids = {});  // (min, max)
    [[nodiscard]] Result<std::map<unsigned, bool>> persistence_mode(const std::vector<unsigned>& gpu_ids = {});

    // CPU reads (GET, cpu-read). Empty ids: every CPU package of the daemon.
    [[nodiscard]] Result<std::map<unsigned, ZeusdCpuEnergy>> cpu_energy(const std::vector<unsigned>& cpu_ids, bool cpu,
                                                                        bool dram);
    [[nodiscard]] Result<ZeusdCpuPower> cpu_power(const std::vector<unsigned>& cpu_ids = {});

    // GET /time: the daemon's wall clock.
    [[nodiscard]] Result<std::chrono::system_clock::time_point> time();

  private:
    struct Transport;
    struct Reply;
    explicit ZeusdClient(ZeusdConfig config);
    [[nodiscard]] Result<Reply> get(std::string_view op, const std::string& path, const std::string& query);
    Status post(std::string_view op, const std::string& path, const std::vector<unsigned>& gpu_ids,
                const std::string& query);
    [[nodiscard]] Status connect_and_discover();
    void who_am_i();

    ZeusdConfig config_;
    std::unique_ptr<Transport> transport_;
    ZeusdDiscovery discovery_;
    std::optional<Error> auth_error_;
    std::optional<ZeusdIdentity> identity_;
};

}  // namespace zeus
