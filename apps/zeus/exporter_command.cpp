// `zeus exporter`: a long-running Prometheus node exporter. A DeviceMetrics
// sampler reads every GPU and CPU package on its own period; GET /metrics,
// served by the project's HTTP server component, hands out its latest sweep
// (Prometheus text, or OpenMetrics when the scraper asks). docs/metrics.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "option_checks.hpp"
#include "server_listen.hpp"
#include "measure_options.hpp"
#include "measure_session.hpp"
#include "zeus/attribution/kubelet.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/device_metrics.hpp"
#include "zeus/metrics/exporter.hpp"

namespace zeus::cli {
namespace {

constexpr unsigned kExporterPort = 9466;

struct ExporterOptions {
    DeviceFlags device;
    std::string listen = fmt::format("0.0.0.0:{}", kExporterPort);
    double period_s = 1.0;
    std::string gpus = "all";
    std::string cpus = "all";
    std::string hostname;
    std::string labels = "zeus";
    bool attribution = false;
    std::string idle_policy = "unattributed";
    double attribution_expiry_s = 600;
    std::string proc_root = "/proc";
    std::string kubelet_socket = attribution::kDefaultKubeletSocket;
    double kubelet_timeout_s = 1.0;
};

void report(const Error& error) { std::cerr << "zeus exporter: " << error.describe() << "\n"; }

int run_exporter(const ExporterOptions& opts) {
    if (!(opts.period_s >= 0.01 && opts.period_s <= 3600)) {
        report(Error{ErrorCode::InvalidArgument, fmt::format("--period {} is outside 0.01 to 3600 seconds", opts.period_s),
                     "give the sampling period in seconds, e.g. --period 1 (the default)"});
        return 2;
    }
    auto gpu_list = parse_index_list("--gpus", opts.gpus);
    if (!gpu_list) return report(gpu_list.error()), 2;
    auto cpu_list = parse_index_list("--cpus", opts.cpus);
    if (!cpu_list) return report(cpu_list.error()), 2;
    if (cpu_list->has_value() && !(*cpu_list)->empty()) {
        report(Error{ErrorCode::InvalidArgument, fmt::format("--cpus {}: the exporter serves all CPU packages or none",
                                                             opts.cpus),
                     "give --cpus all (the default) or --cpus none"});
        return 2;
    }
    auto gpu_options = GpuOptions::from_environment();
    if (!gpu_options) return report(gpu_options.error()), 2;
    gpu_options.value().simulate = gpu_options->simulate || opts.device.simulate;
    auto cpu_options = CpuOptions::from_environment();
    if (!cpu_options) return report(cpu_options.error()), 2;

    Gpus gpus;
    if (!gpu_list->has_value() || !(*gpu_list)->empty()) gpus = Gpus::open(*gpu_options);
    for (const auto& warning : gpus.warnings()) std::cerr << "zeus exporter: " << warning << "\n";
    if (gpu_list->has_value() && !(*gpu_list)->empty()) {
        if (auto ok = check_indices("--gpus", "GPU", **gpu_list, gpus.size(),
                                    gpus.status() ? "" : gpus.status().error().describe());
            !ok) {
            return report(ok.error()), 2;
        }
    } else if (!gpu_list->has_value() && !gpus.status()) {
        std::cerr << "zeus exporter: serving no GPU metrics: " << gpus.status().error().describe() << "\n";
    }
    Cpus cpus;
    if (!cpu_list->has_value()) cpus = Cpus::open(*cpu_options);
    if (!cpus.status() && !cpu_list->has_value()) {
        std::cerr << "zeus exporter: serving no CPU metrics: " << cpus.status().error().describe() << "\n";
    }

    metrics::DeviceMetricsOptions options;
    options.period = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(opts.period_s));
    if (gpu_list->has_value()) options.gpu_indices = **gpu_list;
    options.hostname = opts.hostname;
    options.label_style = opts.labels == "dcgm" ? metrics::LabelStyle::Dcgm : metrics::LabelStyle::Zeus;
    if (opts.attribution) {
        auto idle_policy = attribution::parse_idle_policy(opts.idle_policy);
        if (!idle_policy) return report(idle_policy.error()), 2;
        metrics::AttributionOptions attribution;
        attribution.idle_policy = *idle_policy;
        attribution.expiry = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(opts.attribution_expiry_s));
        attribution.proc_root = opts.proc_root;
        if (opts.kubelet_socket != "none") {
            if (auto socket = attribution::check_kubelet_socket(opts.kubelet_socket); !socket) {
                return report(socket.error()), 2;
            }
            auto kubelet = attribution::open_kubelet_pod_resources(attribution::KubeletOptions{
                opts.kubelet_socket, std::chrono::milliseconds(std::llround(opts.kubelet_timeout_s * 1000))});
            if (!kubelet) return report(kubelet.error()), 2;
            attribution.pod_resources = std::move(kubelet).value();
        }
        options.attribution = attribution;
    }
    auto sampler = metrics::DeviceMetrics::start(gpus, cpus.status() ? &cpus : nullptr, options);
    if (!sampler) return report(sampler.error()), 2;
    const metrics::DeviceMetrics& device_metrics = **sampler;

    metrics::Exporter exporter(device_metrics);
    const auto address = listening(exporter.listen_tcp(opts.listen), opts.listen, "zeus exporter", kExporterPort);
    if (!address) return 2;
    const int signal = exporter.serve_until_signalled([&] {
        std::cerr << fmt::format(
            "zeus exporter: serving http://{}/metrics ({} GPU(s), {} CPU package(s), sampled every {} s)\n", *address,
            options.gpu_indices ? options.gpu_indices->size() : gpus.size(), cpus.status() ? cpus.size() : 0,
            opts.period_s);
    });
    say_stopped("zeus exporter", signal);
    return 0;
}

}  // namespace

Command add_exporter(CLI::App& parent) {
    auto opts = std::make_shared<ExporterOptions>();
    auto* app = parent.add_subcommand("exporter", "Serve GPU and CPU energy, power and more to Prometheus (GET /metrics)");
    add_device_flags(*app, opts->device);
    app->add_option("--listen", opts->listen, kListenHelp)->capture_default_str();
    app->add_option("--period", opts->period_s, "Seconds between device readings (a scrape never waits for one)")
        ->check(finite_number(0.01, 3600.0, "s"))
        ->capture_default_str();
    app->add_option("--gpus", opts->gpus, "GPUs to export: all, none, or visible indices such as 0,2")
        ->capture_default_str();
    app->add_option("--cpus", opts->cpus, "CPU packages to export (RAPL): all or none")->capture_default_str();
    app->add_option("--hostname", opts->hostname, "The hostname label (default: this machine's name)")
        ->check(utf8_name());
    app->add_option("--labels", opts->labels,
                    "GPU label names: zeus (gpu, uuid, name, hostname) or dcgm (gpu, UUID, pci_bus_id, device, "
                    "modelName, Hostname, as dcgm-exporter)")
        ->check(CLI::IsMember({"zeus", "dcgm"}))
        ->capture_default_str();
    // The options below only mean something with it: given alone, they are a forgotten --attribution.
    CLI::Option* attribution =
        app->add_flag("--attribution", opts->attribution,
                      "Also export each GPU's energy per workload (container, pod, Slurm job, user) and the remainder "
                      "(docs/attribution.md); needs the host's /proc (hostPID in a container)");
    app->add_option("--idle-policy", opts->idle_policy,
                    "Who gets a GPU's idle energy: unattributed (the remainder) or allocation (the processes on it)")
        ->check(CLI::IsMember({"unattributed", "allocation"}))
        ->needs(attribution)
        ->capture_default_str();
    app->add_option("--attribution-expiry", opts->attribution_expiry_s,
                    "Seconds after which a workload that gained no energy is dropped (its energy kept as expired)")
        ->check(finite_number(1.0, 7.0 * 24 * 3600, "s"))
        ->needs(attribution)
        ->capture_default_str();
    app->add_option("--proc", opts->proc_root, "Where the host's /proc is mounted")
        ->needs(attribution)
        ->capture_default_str();
    app->add_option("--kubelet-socket", opts->kubelet_socket,
                    "The kubelet's PodResources socket, for the pod_namespace, pod_name and container_name labels of "
                    "attribution and the allocation idle policy; none: pod UIDs only")
        ->needs(attribution)
        ->capture_default_str();
    app->add_option("--kubelet-timeout", opts->kubelet_timeout_s,
                    "Seconds the kubelet has to answer, per sweep (it answers in milliseconds)")
        ->check(finite_number(0.01, 60.0, "s"))
        ->needs(attribution)
        ->capture_default_str();
    return [opts] { return run_exporter(*opts); };
}

}  // namespace zeus::cli
