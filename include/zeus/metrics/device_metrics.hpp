// What a node exporter serves: every GPU's and CPU package's energy, power,
// temperature, power limit and clock as Prometheus metrics, sampled on a
// thread of its own so that a scrape never waits on NVML or RAPL: a scrape
// hands out the exposition the last sweep rendered (in both formats).
//
// Energy counters are the devices' counters made monotonic by the project's
// CounterAccumulator (resets and wraps never make them go down); a reading
// that fails is left out of the scrape (an energy counter too, for as long as
// it fails, then back at a value no lower than before) and counted, each
// time, in zeus_exporter_read_errors_total{device,reason,hostname}. Never NaN. The metric
// names, labels and their DCGM equivalents are in docs/metrics.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/attribution/engine.hpp"
#include "zeus/attribution/pods.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/exposition.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::metrics {

// The labels of GPU series: the project's (gpu, uuid, name, hostname), or
// dcgm-exporter's (gpu, UUID, pci_bus_id, device, modelName, Hostname), so
// that DCGM dashboards and alerts select the same GPUs (docs/metrics.md).
enum class LabelStyle { Zeus, Dcgm };

// Energy attribution (docs/attribution.md): each GPU's energy counter split
// among the workloads on it, exported as zeus_workload_gpu_energy_joules_total
// plus zeus_workload_gpu_remainder_energy_joules_total{reason}, which add up
// to zeus_gpu_energy_joules_total exactly at every sweep. Off unless asked
// for: it needs the host's /proc (hostPID in a container) to name workloads.
struct AttributionOptions {
    attribution::IdlePolicy idle_policy = attribution::IdlePolicy::Unattributed;
    // A workload that gained no energy for this long is dropped; its energy
    // moves to the "expired" remainder (bounded cardinality).
    std::chrono::nanoseconds expiry = std::chrono::minutes(10);
    std::string proc_root = "/proc";
    // Kubernetes names (the pod_namespace, pod_name and container_name labels) from the kubelet's
    // allocations (attribution::KubeletPodResources); nullptr: pod UIDs only.
    // Asked at most once per sweep: while a pod seen on a GPU has no name, and
    // under IdlePolicy::ByAllocation every sweep (the GPUs allocated whole to
    // one container are its, idle included: attribution::GpuHolder).
    std::shared_ptr<attribution::PodResourcesSource> pod_resources;
};

struct DeviceMetricsOptions {
    // How often the devices are read (the scrape serves the latest sweep).
    std::chrono::nanoseconds period = std::chrono::seconds(1);
    std::optional<std::vector<unsigned>> gpu_indices;  // nullopt: every GPU
    // The hostname label; empty: this machine's name.
    std::string hostname;
    LabelStyle label_style = LabelStyle::Zeus;
    // Called with a line the first time a reading fails in a new way
    // (device, reading and error); empty: stderr.
    std::function<void(const std::string&)> on_new_error;
    std::optional<AttributionOptions> attribution;  // nullopt: off
};

struct DeviceMetricsStats {
    std::uint64_t sweeps = 0;
    std::chrono::nanoseconds sampling_cpu_time{0};  // of the sampling thread, all sweeps
    std::chrono::nanoseconds last_sweep_duration{0};
};

// One rendered scrape: shared, immutable, ready to send.
struct Scrape {
    std::shared_ptr<const std::string> body;
    std::string_view content_type;
};

class DeviceMetrics {
  public:
    // Reads every device once (so the first scrape has data), then starts
    // sampling. `gpus` and `cpus` (may be null) must outlive the object.
    // Errors: a GPU index that is not visible, a period outside [10 ms, 1 h].
    static Result<std::unique_ptr<DeviceMetrics>> start(const Gpus& gpus, const Cpus* cpus,
                                                        DeviceMetricsOptions options = {});
    virtual ~DeviceMetrics() = default;

    // The latest sweep in `format`, without touching a device.
    [[nodiscard]] virtual Scrape scrape(ExpositionFormat format) const = 0;
    // The format the scraper's Accept header asks for.
    [[nodiscard]] Scrape scrape_for(std::string_view accept_header) const {
        return scrape(negotiate_format(accept_header));
    }
    // One sweep now, on the caller's thread (tests; the thread keeps going).
    virtual void sample_now() = 0;
    [[nodiscard]] virtual DeviceMetricsStats stats() const = 0;
    [[nodiscard]] virtual std::chrono::nanoseconds period() const = 0;
};

}  // namespace zeus::metrics
