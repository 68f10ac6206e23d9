#include "zeusd/daemon.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "zeus/device/cpu.hpp"
#include "http_server/server.hpp"
#include "http_server/stop_signals.hpp"
#include "http_server/unix_socket.hpp"
#include "zeus/attribution/workload.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/platform/listening_address.hpp"
#include "zeus/report/child_status.hpp"
#include "zeusd/access_summary.hpp"
#include "zeusd/auth/signing_key.hpp"
#include "zeusd/client_watcher.hpp"
#include "zeusd/ledger_lock.hpp"
#include "zeusd/log.hpp"
#include "zeusd/metrics_group.hpp"
#include "zeusd/overrides/command_overrides.hpp"
#include "zeusd/power_streams.hpp"
#include "zeusd/router.hpp"

namespace zeus::zeusd {
namespace asio = boost::asio;

struct Daemon::Parts {
    // First in, last out: held until everything else is stopped and restored.
    std::optional<LedgerLock> ledger_lock;
    // Registered before anything listens: a stop signal that arrives as soon
    // as the socket answers is queued for run_until_signal, not fatal.
    http_server::StopSignals stop_signals;
    ServeConfig config;
    std::optional<CommandOverrides> overrides;
    asio::io_context io;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    asio::thread_pool control_pool{2};
    std::unique_ptr<GpuFleet> gpus;
    std::unique_ptr<GpuOwnership> ownership;  // --control-policy owner
    std::unique_ptr<CpuFleet> cpus;
    std::optional<Cpus> metrics_cpus;  // RAPL for the metrics group when cpu-read is off
    std::unique_ptr<MetricsGroup> metrics;
    std::unique_ptr<PowerStreams> streams;
    std::unique_ptr<ClientWatcher> watcher;
    std::unique_ptr<Router> router;
    std::unique_ptr<http_server::Server> server;
    std::vector<std::thread> workers;
    bool stopped = false;
};

namespace {

void log_server_message(http_server::LogLevel level, const std::string& message) {
    switch (level) {
        case http_server::LogLevel::Error: log::error("{}", message); break;
        case http_server::LogLevel::Warn: log::warn("{}", message); break;
        case http_server::LogLevel::Info: log::info("{}", message); break;
        case http_server::LogLevel::Debug: log::debug("{}", message); break;
    }
}

bool wants_gpus(const ApiGroups& groups) {
    return groups.contains(ApiGroup::GpuControl) || groups.contains(ApiGroup::GpuRead) ||
           groups.contains(ApiGroup::Metrics);
}

Result<Gpus> open_gpus(const ServeConfig& config) {
    auto options = GpuOptions::from_environment();
    if (!options) return options.error();
    // The daemon serves every GPU by its physical index, and is never a
    // client of another daemon.
    options.value().visible_devices.reset();
    options.value().hip_visible_devices.reset();
    options.value().zeusd.reset();
    Gpus gpus = Gpus::open(options.value());
    if (!gpus.status()) {
        return Error{gpus.status().error().code,
                     fmt::format("no GPU backend: {}", gpus.status().error().describe()),
                     "install the GPU driver, or serve only CPUs with --enable cpu-read"};
    }
    const auto& backend = gpus.backend_info().backend;
    if ((config.gpu_backend == GpuBackendChoice::Nvml && backend != "nvml") ||
        (config.gpu_backend == GpuBackendChoice::AmdSmi && backend != "amdsmi")) {
        return Error{ErrorCode::NotFound,
                     fmt::format("--gpu-backend asked for {} but the GPUs found use {}",
                                 config.gpu_backend == GpuBackendChoice::Nvml ? "nvml" : "amdsmi", backend),
                     "use --gpu-backend auto"};
    }
    if (gpus.empty()) {
        return Error{ErrorCode::NotFound, "the GPU backend found no GPUs",
                     "check nvidia-smi / amd-smi, or serve only CPUs with --enable cpu-read"};
    }
    for (const auto& warning : gpus.warnings()) log::warn("{}", warning);
    return gpus;
}

Result<Cpus> open_cpus() {
    auto options = CpuOptions::from_environment();
    if (!options) return options.error();
    options.value().zeusd.reset();
    // Containers mount the host's sysfs at /zeus_sys; the original daemon looks there first.
    options.value().powercap_search = {"/zeus_sys/class/powercap", "/sys/class/powercap"};
    Cpus cpus = Cpus::open(options.value());
    if (!cpus.status()) {
        return Error{cpus.status().error().code, fmt::format("no RAPL: {}", cpus.status().error().describe()),
                     "serve without CPUs by leaving cpu-read out of --enable"};
    }
    for (const auto& cpu : cpus) {
        if (!cpu->status()) {
            return Error{cpu->status().error().code,
                         fmt::format("CPU {} cannot be read: {}", cpu->identity().index,
                                     cpu->status().error().describe()),
                         "run zeusd as root (it reads /sys/class/powercap), or leave cpu-read out of --enable"};
        }
    }
    for (const auto& warning : cpus.warnings()) log::warn("{}", warning);
    return cpus;
}

Result<std::optional<CommandOverrides>> load_overrides(const ServeConfig& config, const ApiGroups& enabled) {
    if (!config.gpu_command_overrides) return std::optional<CommandOverrides>{};
    if (!enabled.contains(ApiGroup::GpuControl)) {
        log::warn("ignoring --gpu-command-overrides: gpu-control is not enabled");
        return std::optional<CommandOverrides>{};
    }
    auto overrides = CommandOverrides::load(*config.gpu_command_overrides, ::geteuid());
    if (!overrides) return overrides.error();
    for (const auto& warning : overrides.value().warnings()) log::warn("{}", warning);
    return std::optional<CommandOverrides>{std::move(overrides).value()};
}

// Without GPUs the default groups go on serving CPUs, and drop gpu-read and
// gpu-control from `enabled`; groups the user named fail instead.
Result<std::optional<Gpus>> open_wanted_gpus(const ServeConfig& config, ApiGroups& enabled, bool groups_named) {
    if (!wants_gpus(enabled)) return std::optional<Gpus>{};
    auto opened = open_gpus(config);
    const bool only_metrics = !enabled.contains(ApiGroup::GpuControl) && !enabled.contains(ApiGroup::GpuRead);
    if (opened) return std::optional<Gpus>{std::move(opened).value()};
    if (only_metrics) {
        log::warn("metrics: serving no GPU metrics: {}", opened.error().describe());
    } else if (groups_named || config.gpu_backend != GpuBackendChoice::Auto) {
        // A backend named with --gpu-backend is a promise too.
        return opened.error();
    } else {
        log::warn(
            "serving without GPUs: {}. gpu-read and gpu-control are off and /discover lists no GPUs; to "
            "fix it, install the GPU driver (NVML or AMD SMI) and restart zeusd, or pass --enable cpu-read "
            "to make this the intended setup",
            opened.error().describe());
        enabled.erase(ApiGroup::GpuRead);
        enabled.erase(ApiGroup::GpuControl);
    }
    return std::optional<Gpus>{};
}

Status check_control_privileges(const ApiGroups& enabled, const std::optional<CommandOverrides>& overrides,
                                const std::optional<Gpus>& gpus) {
    if (::geteuid() == 0 || !enabled.contains(ApiGroup::GpuControl)) return {};
    const bool overridden = overrides && !overrides->empty();
    const bool simulated = gpus && gpus->backend_info().simulated;
    if (!overridden && !simulated) {
        return Error{ErrorCode::NoPermission, "gpu-control needs zeusd to run as root",
                     "run zeusd as root (the systemd unit does), configure --gpu-command-overrides, or leave "
                     "gpu-control out of --enable"};
    }
    return {};
}

Result<RouterOptions> make_router_options(const ServeConfig& config, const ApiGroups& enabled) {
    RouterOptions router_options;
    router_options.enabled = enabled;
    router_options.control_users = config.control_users;
    router_options.control_groups = config.control_groups;
    router_options.cpu_power_window =
        std::chrono::microseconds(static_cast<std::int64_t>(1e6 / config.cpu_power_poll_hz));
    if (config.signing_key_path) {
        auto key = load_signing_key(*config.signing_key_path);
        if (!key) return key.error();
        router_options.signing_key = std::move(key).value();
    }
    return router_options;
}

// --proc, which the owner policy and attribution read.
Status check_proc_root(const ServeConfig& config) { return attribution::check_proc_root(config.proc_root); }

// --attribution exports through the metrics group. A --proc that neither it
// nor the owner policy reads is a forgotten flag, not something to ignore.
Status check_attribution(const ServeConfig& config, const ApiGroups& enabled) {
    if (!config.attribution && config.control_policy != ControlPolicy::Owner &&
        config.proc_root != ServeDefaults::proc_root) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("--proc {}: only --control-policy owner and --attribution read it, and neither is on",
                                 config.proc_root),
                     "add the one you meant, or leave --proc out"};
    }
    if (!config.attribution) return {};
    if (!enabled.contains(ApiGroup::Metrics)) {
        return Error{ErrorCode::InvalidConfig,
                     "--attribution: the per-workload series are served on GET /metrics, and the metrics group is off",
                     "add metrics to --enable (e.g. --enable gpu-control,gpu-read,cpu-read,metrics)"};
    }
    return check_proc_root(config);
}

// The owner policy's checker, or null under --control-policy any (or
// without gpu-control). Refuses to start when a GPU cannot list its
// processes or the /proc root is missing: every request would be refused.
Result<std::unique_ptr<GpuOwnership>> make_ownership(const ServeConfig& config, const ApiGroups& enabled,
                                                     const GpuFleet* fleet) {
    if (config.control_policy != ControlPolicy::Owner || !enabled.contains(ApiGroup::GpuControl) || fleet == nullptr) {
        return std::unique_ptr<GpuOwnership>{};
    }
    if (const auto blind = gpus_without_process_list(fleet->gpus()); !blind.empty()) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("--control-policy owner needs the driver's list of each GPU's processes, and GPU(s) "
                                 "{} ({} backend) have none",
                                 fmt::join(blind, ", "), fleet->gpus().backend_info().backend),
                     "use the NVML backend (NVIDIA driver 450 or newer), or --control-policy any"};
    }
    if (auto proc = check_proc_root(config); !proc) return proc.error();
    return std::make_unique<GpuOwnership>(config.proc_root);
}

// Empty when no command is overridden: the fleet then drives the GPUs itself.
OverrideRunner make_override_runner(const std::optional<CommandOverrides>& overrides) {
    if (!overrides || overrides->empty()) return {};
    return [overrides = *overrides](const ControlCommand& command) -> std::optional<Status> {
        if (!overrides.has(command.kind)) return std::nullopt;
        CommandArguments arguments;
        arguments.gpu_id = command.gpu;
        arguments.power_limit_mw = command.power_limit_mw;
        arguments.min_clock_mhz = command.min_clock_mhz;
        arguments.max_clock_mhz = command.max_clock_mhz;
        arguments.enabled = command.enabled;
        return overrides.run(command.kind, arguments);
    };
}

Status check_ledger_directory(const std::filesystem::path& ledger_path) {
    std::error_code error;
    if (ledger_path.has_parent_path()) std::filesystem::create_directories(ledger_path.parent_path(), error);
    const auto directory = ledger_path.has_parent_path() ? ledger_path.parent_path() : ".";
    if (error || ::access(directory.c_str(), W_OK) != 0) {
        return Error{ErrorCode::NoPermission,
                     fmt::format("cannot write the restore ledger's directory {}", directory.string()),
                     "zeusd records GPU changes there before applying them, so that they are undone even "
                     "after a crash; pass a writable --restore-ledger PATH"};
    }
    return {};
}

std::filesystem::path ledger_path_of(const ServeConfig& config) {
    return config.restore_ledger_path.value_or(default_ledger_path(config));
}

// Before the GPU fleet starts (and so before it restores anything): a
// daemon holding our ledger is alive, and its clients' settings are its own
// to restore. Without gpu-control, a lock that cannot be created (a
// read-only ledger directory) is not fatal: this daemon changes no GPU, and
// leaves the ledger's leftovers to a daemon that can lock it.
Result<std::optional<LedgerLock>> claim_ledger(const ServeConfig& config, const ApiGroups& enabled) {
    const auto ledger_path = ledger_path_of(config);
    const bool controls = enabled.contains(ApiGroup::GpuControl);
    if (controls) {
        if (auto writable = check_ledger_directory(ledger_path); !writable) return writable.error();
    }
    auto lock = LedgerLock::acquire(
        ledger_path, config.mode == ListenMode::UnixSocket ? config.socket_path : config.tcp_bind_address);
    if (lock) return std::optional<LedgerLock>{std::move(lock).value()};
    if (controls || lock.error().code == ErrorCode::InUse) return lock.error();
    log::warn("{}; GPU settings a crashed zeusd left in the ledger are not restored", lock.error().describe());
    return std::optional<LedgerLock>{};
}

// Puts back what a crashed zeusd left changed before serving anyone, when
// this daemon holds the ledger's lock (`locked`).
std::unique_ptr<GpuFleet> start_gpu_fleet(Gpus gpus, const ServeConfig& config, bool locked,
                                          const std::optional<CommandOverrides>& overrides,
                                          const asio::any_io_executor& control_executor) {
    OverrideRunner runner = make_override_runner(overrides);
    auto fleet = std::make_unique<GpuFleet>(std::move(gpus), control_executor, runner, ledger_path_of(config));
    for (const auto& info : fleet->info()) {
        log::info("GPU {}: {} at {} (cumulative energy {})", info.id, info.name, info.pci_address,
                  info.cumulative_energy_available ? "available" : "unavailable");
    }
    if (locked) fleet->restore_leftovers();
    return fleet;
}

// Null when the default groups find no RAPL; groups the user named fail instead.
Result<std::unique_ptr<CpuFleet>> open_cpu_fleet(bool groups_named) {
    auto cpus = open_cpus();
    if (cpus) {
        auto fleet = std::make_unique<CpuFleet>(std::move(cpus).value());
        log::info("{} CPU package(s) from {}", fleet->size(), fleet->cpus().powercap_root());
        return fleet;
    }
    if (groups_named) return cpus.error();
    // Most cloud VMs and many containers: as the original, CPU routes
    // are served and find no CPU.
    log::warn(
        "serving without CPUs: {}. /discover lists no CPUs and /cpu routes find none; to fix it, run "
        "zeusd as root on a machine with Intel/AMD RAPL (/sys/class/powercap, or /zeus_sys/class/"
        "powercap in a container), or pass --enable gpu-control,gpu-read to make this the intended "
        "setup",
        cpus.error().describe());
    return std::unique_ptr<CpuFleet>{};
}

// Reads RAPL through the cpu-read fleet when there is one, else opens the
// CPUs into `metrics_cpus` for the metrics group alone. With the owner
// policy (`ownership`), its checks are served too.
Result<std::unique_ptr<MetricsGroup>> start_metrics(const ServeConfig& config, const GpuFleet* gpus,
                                                    const CpuFleet* cpus, const GpuOwnership* ownership,
                                                    std::optional<Cpus>& metrics_cpus) {
    const Cpus* rapl = cpus != nullptr ? &cpus->cpus() : nullptr;
    if (rapl == nullptr) {
        if (auto opened = open_cpus()) {
            metrics_cpus = std::move(opened).value();
            rapl = &*metrics_cpus;
        } else {
            log::warn("metrics: serving no CPU metrics: {}", opened.error().describe());
        }
    }
    DaemonFamilies daemon_families;
    if (ownership != nullptr) {
        daemon_families = [ownership] { return std::vector<metrics::MetricFamily>{checks_family(*ownership)}; };
    }
    return MetricsGroup::start(gpus != nullptr ? &gpus->gpus() : nullptr, rapl, config.attribution,
                               std::move(daemon_families));
}

// Requests are served on --num-workers threads of the server's own, one
// io_context each, every connection staying on the thread it was dealt
// to; the daemon's `io` keeps one thread for accepting, timers and watching
// clients. By default two per logical CPU: a thread that the scheduler holds off
// its core for a tick (4 ms at HZ=250; the clients themselves are enough)
// stalls only its share of the connections, and the smaller that share the
// lower the p99. Measured on 2 CPUs against the original (docs/benchmarks.md,
// zeusd load, 2026-11-28): with CPUs + 1 threads p99 was 1.4-2.1 ms where
// the original's was 0.7-1.5; with 2 x CPUs it is lower than or equal to
// the original's on every route and transport, at 1.1-1.6x its requests/s.
// (One io_context shared by all threads, each connection on a strand,
// cut the tails as well but lost a tenth of the throughput to hand-offs.)
unsigned session_threads(const ServeConfig& config) {
    return config.num_workers > 0 ? config.num_workers : 2 * std::max(1U, std::thread::hardware_concurrency());
}

std::unique_ptr<http_server::Server> make_server(asio::io_context& io, const Router& router,
                                                 const ServeConfig& config) {
    http_server::ServerOptions server_options;
    server_options.name = "zeusd";
    server_options.limits.request_timeout = config.request_timeout;
    server_options.limits.max_connections_per_peer = config.max_connections_per_peer;
    server_options.limits.max_event_streams_per_peer = config.max_streams_per_peer;
    server_options.limits.max_queued_events = config.max_queued_events;
    server_options.log = log_server_message;
    server_options.session_threads = session_threads(config);
    return std::make_unique<http_server::Server>(
        io,
        [router = &router](const Request& request, const Peer& peer, Respond respond) {
            router->handle(request, peer, std::move(respond));
        },
        server_options);
}

Status listen_unix(http_server::Server& server, const ServeConfig& config) {
    if (auto prepared = http_server::prepare_socket_path(config.socket_path, log_server_message); !prepared) {
        return prepared.error();
    }
    if (auto listening = server.listen_unix(config.socket_path); !listening) return listening.error();
    if (auto access = http_server::set_socket_access(config.socket_path, config.socket_permissions, config.socket_uid,
                                                     config.socket_gid);
        !access) {
        return access.error();
    }
    log::info("listening on {} (mode {:o})", config.socket_path, config.socket_permissions);
    return {};
}

Status listen_tcp(http_server::Server& server, const ServeConfig& config, bool authenticated) {
    auto listening = server.listen_tcp(config.tcp_bind_address);
    if (!listening) return listening.error();
    const std::string address = listening_address(config.tcp_bind_address, *listening);
    log::info("listening on {}", address);
    if (!authenticated) {
        log::warn("serving TCP without --signing-key-path: anyone who can reach {} can use every enabled API group",
                  address);
    }
    return {};
}

}  // namespace

Daemon::Daemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Daemon::~Daemon() { stop(); }

Result<std::unique_ptr<Daemon>> Daemon::start(const ServeConfig& config) {
    auto parts = std::make_unique<Parts>();
    parts->config = config;
    ApiGroups enabled = config.enable.value_or(ApiGroups{ApiGroup::GpuControl, ApiGroup::GpuRead, ApiGroup::CpuRead});
    // Groups the user named are a promise: a device they need that is missing
    // stops start-up. The default groups serve whatever this machine has.
    const bool groups_named = config.enable.has_value();
    log::info("{}", access_summary(config, enabled, config.signing_key_path.has_value()));

    if (auto attribution = check_attribution(config, enabled); !attribution) return attribution.error();
    auto overrides = load_overrides(config, enabled);
    if (!overrides) return overrides.error();
    parts->overrides = std::move(overrides).value();
    // A live daemon on our socket is left alone, before any device is opened.
    if (config.mode == ListenMode::UnixSocket) {
        if (auto prepared = http_server::prepare_socket_path(config.socket_path, log_server_message); !prepared) {
            return prepared.error();
        }
    }
    auto wanted_gpus = open_wanted_gpus(config, enabled, groups_named);
    if (!wanted_gpus) return wanted_gpus.error();
    std::optional<Gpus> gpus = std::move(wanted_gpus).value();
    if (auto allowed = check_control_privileges(enabled, parts->overrides, gpus); !allowed) return allowed.error();
    auto made_router_options = make_router_options(config, enabled);
    if (!made_router_options) return made_router_options.error();
    RouterOptions router_options = std::move(made_router_options).value();

    if (gpus) {
        auto claimed = claim_ledger(config, enabled);
        if (!claimed) return claimed.error();
        parts->ledger_lock = std::move(claimed).value();
        parts->gpus = start_gpu_fleet(std::move(*gpus), config, parts->ledger_lock.has_value(), parts->overrides,
                                      parts->control_pool.get_executor());
    }
    auto ownership = make_ownership(config, enabled, parts->gpus.get());
    if (!ownership) return ownership.error();
    parts->ownership = std::move(ownership).value();
    router_options.ownership = parts->ownership.get();
    if (enabled.contains(ApiGroup::CpuRead)) {
        auto fleet = open_cpu_fleet(groups_named);
        if (!fleet) return fleet.error();
        parts->cpus = std::move(fleet).value();
    }
    if (enabled.contains(ApiGroup::Metrics)) {
        auto metrics =
            start_metrics(config, parts->gpus.get(), parts->cpus.get(), parts->ownership.get(), parts->metrics_cpus);
        if (!metrics) return metrics.error();
        parts->metrics = std::move(metrics).value();
        router_options.metrics = parts->metrics.get();
    }
    parts->streams = std::make_unique<PowerStreams>(
        enabled.contains(ApiGroup::GpuRead) ? parts->gpus.get() : nullptr, parts->cpus.get(),
        config.gpu_power_poll_hz, config.cpu_power_poll_hz);

    GpuFleet* fleet = parts->gpus.get();
    parts->watcher = std::make_unique<ClientWatcher>(parts->io.get_executor(), [fleet](ClientId client) {
        log::info("{} exited; restoring what it changed", describe_client(client));
        if (fleet != nullptr) fleet->restore_client(client);
    });
    ClientWatcher* watcher = parts->watcher.get();
    parts->router = std::make_unique<Router>(
        router_options, parts->gpus.get(), parts->cpus.get(), parts->io.get_executor(),
        [watcher](const Peer& peer) { return watcher->identify(peer); }, parts->streams.get());
    parts->server = make_server(parts->io, *parts->router, config);

    const bool authenticated = router_options.signing_key.has_value();
    auto listening = config.mode == ListenMode::UnixSocket ? listen_unix(*parts->server, config)
                                                           : listen_tcp(*parts->server, config, authenticated);
    if (!listening) return listening.error();
    log::info("enabled API groups: {}; authentication {}", join(enabled), authenticated ? "required" : "off");

    parts->work.emplace(parts->io.get_executor());
    parts->workers.emplace_back([io = &parts->io] { io->run(); });
    return std::unique_ptr<Daemon>(new Daemon(std::move(parts)));
}

void Daemon::run_until_signal() {
    const int signal = parts_->stop_signals.wait();
    log::info("received {}; shutting down", report::signal_name(signal));
    stop();
}

void Daemon::stop() {
    if (!parts_ || parts_->stopped) return;
    parts_->stopped = true;
    parts_->server->stop();
    if (parts_->gpus) parts_->gpus->restore_all();
    parts_->work.reset();
    parts_->io.stop();
    for (auto& worker : parts_->workers) worker.join();
    parts_->control_pool.join();
    if (parts_->config.mode == ListenMode::UnixSocket) ::unlink(parts_->config.socket_path.c_str());
    log::info("stopped");
}

}  // namespace zeus::zeusd
