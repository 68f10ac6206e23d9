#include "zeus/metrics/device_metrics.hpp"

#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <thread>
#include <tuple>

#include "zeus/attribution/ledger.hpp"
#include "zeus/device/counter_accumulator.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::metrics {
namespace {

using namespace std::chrono_literals;

std::chrono::nanoseconds thread_cpu_time() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::string this_hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

// "gpu lost" -> "gpu_lost": error codes as label values.
std::string reason_label(ErrorCode code) {
    std::string text(to_string(code));
    for (char& c : text) {
        c = (c == ' ' || c == '-') ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return text;
}

bool permanently_unsupported(const Error& error) {
    return error.code == ErrorCode::NotSupported || error.code == ErrorCode::FunctionNotFound;
}

// A value that may only go up: what was exported last is the floor.
struct MonotonicValue {
    std::optional<double> value;
    void offer(double v) {
        if (std::isfinite(v) && (!value || v > *value)) value = v;
    }
};

enum class Reading { Energy, PowerInstant, PowerAverage, MemoryPower, Temperature, PowerLimit, SmClock, Count };

constexpr std::string_view reading_name(Reading reading) {
    switch (reading) {
        case Reading::Energy: return "energy";
        case Reading::PowerInstant: return "instant power";
        case Reading::PowerAverage: return "average power";
        case Reading::MemoryPower: return "memory power";
        case Reading::Temperature: return "temperature";
        case Reading::PowerLimit: return "power limit";
        case Reading::SmClock: return "SM clock";
        case Reading::Count: break;
    }
    return "?";
}

struct GpuState {
    const Gpu* gpu = nullptr;
    unsigned index = 0;  // visible (CUDA) index
    Labels labels;
    std::string device;  // "gpu0" for the error counter
    std::array<bool, static_cast<std::size_t>(Reading::Count)> enabled{};
    std::array<std::optional<double>, static_cast<std::size_t>(Reading::Count)> latest{};
    // The GPU's counter fed through an accumulator of our own too: the
    // backend already makes it monotonic, and this keeps that true for
    // backends (or a transient probe failure) that hand out raw values.
    std::unique_ptr<CounterAccumulator> energy;
    double energy_base_j = 0;
    MonotonicValue energy_j;
    // False while the energy counter cannot be read: the counter is then left
    // out of the scrape (Prometheus marks it stale) instead of repeating its
    // last value as if the GPU drew nothing.
    bool energy_fresh = false;
    MonotonicValue counter_resets;

    bool& on(Reading r) { return enabled[static_cast<std::size_t>(r)]; }
    std::optional<double>& value(Reading r) { return latest[static_cast<std::size_t>(r)]; }
};

struct CpuState {
    const Cpu* cpu = nullptr;
    Labels labels;
    std::string device;  // "cpu0"
    std::string dram_device;  // "dram0"
    MonotonicValue package_j;
    MonotonicValue dram_j;
};

class DeviceMetricsImpl final : public DeviceMetrics {
  public:
    DeviceMetricsImpl(const Gpus& gpus, const Cpus* cpus, DeviceMetricsOptions options)
        : gpus_(gpus), cpus_(cpus), options_(std::move(options)) {}

    ~DeviceMetricsImpl() override {
        thread_.request_stop();
        if (thread_.joinable()) thread_.join();
    }

    Status init() {
        if (options_.period < 10ms || options_.period > 1h) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("the sampling period {} ms is outside 10 ms to 1 h",
                                     std::chrono::duration_cast<std::chrono::milliseconds>(options_.period).count()),
                         "give a period such as 1s (the default)", 0};
        }
        // On every series, where one byte that is not UTF-8 would make every
        // scrape unparseable: a given name is refused, the machine's replaced.
        if (auto named = require_utf8("the hostname label", options_.hostname); !named) return named.error();
        if (options_.hostname.empty()) options_.hostname = to_utf8(this_hostname());
        if (options_.attribution) {
            if (auto proc = attribution::check_proc_root(options_.attribution->proc_root); !proc) return proc.error();
        }
        std::vector<unsigned> indices;
        if (options_.gpu_indices) {
            indices = *options_.gpu_indices;
            std::set<unsigned> seen;
            for (unsigned index : indices) {
                if (index >= gpus_.size()) {
                    return Error{ErrorCode::NotFound,
                                 gpus_.empty() ? fmt::format("GPU index {} is unknown: no GPU is visible ({})", index,
                                                             gpus_.status() ? "none found" : gpus_.status().error().describe())
                                               : fmt::format("GPU index {} is unknown: the visible GPUs are 0-{}",
                                                             index, gpus_.size() - 1),
                                 "list GPUs with `zeus show-env` and give visible (CUDA) indices", 0};
                }
                if (!seen.insert(index).second) {
                    return Error{ErrorCode::InvalidArgument, fmt::format("GPU index {} is listed twice", index),
                                 "list each GPU once", 0};
                }
            }
        } else {
            for (std::size_t i = 0; i < gpus_.size(); ++i) indices.push_back(static_cast<unsigned>(i));
        }
        for (unsigned index : indices) {
            const Gpu& gpu = gpus_[index];
            GpuState state;
            state.gpu = &gpu;
            state.index = index;
            state.device = fmt::format("gpu{}", index);
            state.labels = gpu_labels(index, gpu.identity());
            if (!gpu.available()) {
                count_error(state.device, "GPU", gpu.status().error());
                gpu_states_.push_back(std::move(state));
                continue;
            }
            const auto& caps = gpu.capabilities();
            auto usable = [](const Capability& c) { return c.supported || !c.definitive; };
            state.on(Reading::Energy) = usable(caps.energy_counter);
            state.on(Reading::PowerInstant) = usable(caps.instant_power.support);
            state.on(Reading::PowerAverage) = usable(caps.average_power.support);
            state.on(Reading::MemoryPower) = usable(caps.memory_power.support);
            state.on(Reading::Temperature) = true;
            state.on(Reading::PowerLimit) = usable(caps.power_limit);
            state.on(Reading::SmClock) = true;
            if (state.on(Reading::Energy)) {
                state.energy = std::make_unique<CounterAccumulator>(
                    CounterSpec{fmt::format("GPU {} energy", index), 0, 1e-3, Watts(0.0)});
            }
            gpu_states_.push_back(std::move(state));
        }
        if (cpus_ != nullptr) {
            for (const auto& cpu : *cpus_) {
                CpuState state;
                state.cpu = cpu.get();
                const auto& id = cpu->identity();
                state.device = fmt::format("cpu{}", id.index);
                state.dram_device = fmt::format("dram{}", id.index);
                state.labels = {{"package", std::to_string(id.index)},
                                {"name", id.zone_name},
                                {hostname_label(), options_.hostname}};
                if (!cpu->available()) count_error(state.device, "CPU package", cpu->status().error());
                cpu_states_.push_back(std::move(state));
            }
        }
        if (options_.attribution) start_attribution(*options_.attribution);
        sample_now();
        thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
        return {};
    }

    Scrape scrape(ExpositionFormat format) const override {
        std::lock_guard lock(published_mutex_);
        return {format == ExpositionFormat::OpenMetrics ? openmetrics_ : text_, content_type(format)};
    }

    void sample_now() override {
        std::lock_guard sweep_lock(sweep_mutex_);
        const auto cpu_before = thread_cpu_time();
        const auto started = std::chrono::steady_clock::now();
        for (auto& state : gpu_states_) sample_gpu(state);
        if (ledger_) attribute(std::chrono::steady_clock::now());
        for (auto& state : cpu_states_) sample_cpu(state);
        const auto duration = std::chrono::steady_clock::now() - started;
        {
            std::lock_guard lock(stats_mutex_);
            ++stats_.sweeps;
            stats_.sampling_cpu_time += thread_cpu_time() - cpu_before;
            stats_.last_sweep_duration = duration;
        }
        publish();
    }

    DeviceMetricsStats stats() const override {
        std::lock_guard lock(stats_mutex_);
        return stats_;
    }
    std::chrono::nanoseconds period() const override { return options_.period; }

  private:
    std::string hostname_label() const { return options_.label_style == LabelStyle::Dcgm ? "Hostname" : "hostname"; }

    // docs/metrics.md: zeus labels, or dcgm-exporter's names for the same
    // things; simulated GPUs carry simulated="true" either way.
    Labels gpu_labels(unsigned index, const GpuIdentity& id) const {
        Labels labels;
        if (options_.label_style == LabelStyle::Dcgm) {
            labels = {{"gpu", std::to_string(index)},
                      {"UUID", id.uuid},
                      {"pci_bus_id", id.pci_bus_id},
                      {"device", fmt::format("nvidia{}", id.physical_index)},
                      {"modelName", id.name},
                      {"Hostname", options_.hostname}};
        } else {
            labels = {{"gpu", std::to_string(index)}, {"uuid", id.uuid}, {"name", id.name}, {"hostname", options_.hostname}};
        }
        if (gpus_.backend_info().simulated) labels.push_back({"simulated", "true"});
        return labels;
    }

    void run(const std::stop_token& stop) {
        std::mutex mutex;
        std::condition_variable_any wake;
        auto next = std::chrono::steady_clock::now() + options_.period;
        while (!stop.stop_requested()) {
            {
                std::unique_lock lock(mutex);
                wake.wait_until(lock, stop, next, [] { return false; });
            }
            if (stop.stop_requested()) break;
            sample_now();
            next += options_.period;
            const auto now = std::chrono::steady_clock::now();
            if (next < now) next = now + options_.period;  // fell behind: skip, never burst
        }
    }

    void count_error(const std::string& device, std::string_view reading, const Error& error) {
        std::lock_guard lock(errors_mutex_);
        ++errors_[{device, reason_label(error.code)}];
        if (first_seen_.insert(std::make_tuple(device, std::string(reading), error.code)).second) {
            const std::string line = fmt::format("exporter: {} {} could not be read and is left out of scrapes: {}",
                                                 device, reading, error.describe());
            if (options_.on_new_error) {
                options_.on_new_error(line);
            } else {
                std::fprintf(stderr, "zeus: %s\n", line.c_str());
            }
        }
    }

    // Stores a reading or counts its failure; a reading the device does not
    // support is counted once and then no longer attempted.
    template <class T, class Convert>
    void take(GpuState& state, Reading reading, const Result<T>& result, Convert convert) {
        if (result) {
            const double v = convert(*result);
            if (std::isfinite(v)) {
                state.value(reading) = v;
                return;
            }
            state.value(reading).reset();
            return;
        }
        state.value(reading).reset();
        count_error(state.device, reading_name(reading), result.error());
        if (permanently_unsupported(result.error())) state.on(reading) = false;
    }

    void sample_gpu(GpuState& state) {
        const Gpu& gpu = *state.gpu;
        if (!gpu.available() || !state.on(Reading::Energy)) state.energy_fresh = false;
        if (!gpu.available()) return;
        if (state.on(Reading::Energy)) {
            auto mj = gpu.total_energy();
            if (mj) {
                const auto raw = static_cast<std::uint64_t>(std::max<std::int64_t>(0, mj->count()));
                if (state.energy->stats().samples == 0) state.energy_base_j = static_cast<double>(raw) * 1e-3;
                state.energy->update(raw, CounterAccumulator::Clock::now());
                state.energy_j.offer(state.energy_base_j + state.energy->total().count());
                state.energy_fresh = true;
                if (auto stats = gpu.energy_counter_stats()) {
                    state.counter_resets.offer(static_cast<double>(stats->resets + state.energy->stats().resets));
                }
            } else {
                state.energy_fresh = false;
                count_error(state.device, reading_name(Reading::Energy), mj.error());
                if (permanently_unsupported(mj.error())) state.on(Reading::Energy) = false;
            }
        }
        auto watts = [](const PowerReading& r) { return quantity_cast<Watts>(r.power).count(); };
        if (state.on(Reading::PowerInstant)) take(state, Reading::PowerInstant, gpu.power(PowerDomain::DeviceInstant), watts);
        if (state.on(Reading::PowerAverage)) take(state, Reading::PowerAverage, gpu.power(PowerDomain::DeviceAverage), watts);
        if (state.on(Reading::MemoryPower)) take(state, Reading::MemoryPower, gpu.power(PowerDomain::MemoryAverage), watts);
        if (state.on(Reading::Temperature)) {
            take(state, Reading::Temperature, gpu.temperature(), [](Celsius c) { return c.count(); });
        }
        if (state.on(Reading::PowerLimit)) {
            take(state, Reading::PowerLimit, gpu.power_limit(),
                 [](Milliwatts mw) { return quantity_cast<Watts>(mw).count(); });
        }
        if (state.on(Reading::SmClock)) {
            take(state, Reading::SmClock, gpu.sm_clock(),
                 [](Megahertz mhz) { return static_cast<double>(mhz.count()) * 1e6; });
        }
    }

    void start_attribution(const AttributionOptions& options) {
        process_source_ = std::make_unique<attribution::GpusProcessSource>(gpus_);
        attribution::AttributorOptions engine_options;
        engine_options.idle_policy = options.idle_policy;
        attributor_ = std::make_unique<attribution::Attributor>(*process_source_, engine_options);
        resolver_ = std::make_unique<attribution::WorkloadResolver>(options.proc_root);
        ledger_ = std::make_unique<attribution::WorkloadLedger>(*resolver_, options.expiry);
        if (options.pod_resources) {
            std::vector<attribution::GpuIds> ids;
            for (const auto& state : gpu_states_) {
                const GpuIdentity& id = state.gpu->identity();
                ids.push_back({state.index, id.uuid, id.pci_bus_id, {}});
            }
            pod_namer_ = std::make_unique<attribution::PodNamer>(std::move(ids));
        }
    }

    // The kubelet's allocations, asked at most once per pass (pass_allocations_
    // is reset at its start); nullptr when the kubelet failed (counted).
    const std::vector<attribution::ContainerAllocation>* allocations() {
        if (!pass_allocations_) {
            pass_allocations_ = options_.attribution->pod_resources->gpu_allocations();
            if (!*pass_allocations_) count_error("kubelet", "pod resources", pass_allocations_->error());
        }
        return *pass_allocations_ ? &**pass_allocations_ : nullptr;
    }

    // Under IdlePolicy::ByAllocation, the GPUs allocated whole to one container.
    std::map<std::size_t, attribution::GpuHolder> gpu_holders() {
        if (options_.attribution->idle_policy != attribution::IdlePolicy::ByAllocation) return {};
        const auto* listed = allocations();
        return listed ? pod_namer_->holders(*listed) : std::map<std::size_t, attribution::GpuHolder>{};
    }

    // Names the pods seen in this pass from the kubelet's allocations; while
    // the kubelet fails, the pods keep their UIDs (and names learned before).
    void name_pods() {
        const auto& seen = ledger_->pods_seen();
        if (!pod_namer_->needs_names(seen)) return;
        const auto* listed = allocations();
        if (listed == nullptr) return;
        for (const Error& error : pod_namer_->learn(*listed, seen)) count_error("kubelet", "pod resources", error);
    }

    void forget_ended_pods() {
        std::set<std::string> pod_uids, container_ids;
        for (const auto& [key, total] : ledger_->workloads()) {
            pod_uids.insert(key.pod_uid);
            container_ids.insert(key.container_id);
        }
        pod_namer_->retain(pod_uids, container_ids);
    }

    // One attribution pass over the GPUs whose counter was just read, on the
    // very value the scrape shows for them, so that the workloads and the
    // remainder add up to it.
    void attribute(std::chrono::steady_clock::time_point now) {
        pass_allocations_.reset();
        const auto holders = pod_namer_ ? gpu_holders() : std::map<std::size_t, attribution::GpuHolder>{};
        for (const auto& state : gpu_states_) {
            if (!state.energy_fresh || !state.energy_j.value) continue;
            const auto counter_mj = static_cast<std::int64_t>(std::llround(*state.energy_j.value * 1000.0));
            const auto interval = attributor_->step(state.index, Millijoules(counter_mj), now);
            const auto holder = holders.find(state.index);
            for (const Error& error :
                 ledger_->add(interval, counter_mj, now, holder == holders.end() ? nullptr : &holder->second)) {
                count_error(state.device, "process attribution", error);
            }
        }
        if (pod_namer_) name_pods();
        ledger_->end_pass(now);
        if (pod_namer_) forget_ended_pods();
    }

    void sample_cpu(CpuState& state) {
        const Cpu& cpu = *state.cpu;
        if (!cpu.available()) return;
        auto package = cpu.package_energy();
        if (package) {
            state.package_j.offer(package->count());
        } else {
            count_error(state.device, "package energy", package.error());
        }
        if (cpu.has_dram()) {
            auto dram = cpu.dram_energy();
            if (dram) {
                state.dram_j.offer(dram->count());
            } else {
                count_error(state.dram_device, "DRAM energy", dram.error());
            }
        }
    }

    std::vector<MetricFamily> families() const {
        std::vector<MetricFamily> out;
        auto gpu_family = [&](std::string name, std::string help, MetricType type, std::string unit, auto value_of) {
            MetricFamily f{std::move(name), std::move(help), type, std::move(unit), {}, {}};
            for (const auto& state : gpu_states_) {
                if (auto v = value_of(state)) f.samples.push_back({state.labels, *v});
            }
            out.push_back(std::move(f));
        };
        auto reading = [](Reading r) {
            return [r](const GpuState& s) { return s.latest[static_cast<std::size_t>(r)]; };
        };
        gpu_family("zeus_gpu_energy_joules",
                   "Energy the GPU drew since its driver loaded (NVML total energy counter), never decreasing",
                   MetricType::Counter, "joules",
                   [](const GpuState& s) { return s.energy_fresh ? s.energy_j.value : std::nullopt; });
        gpu_family("zeus_gpu_power_instant_watts", "Instant GPU power (NVML_FI_DEV_POWER_INSTANT)", MetricType::Gauge,
                   "watts", reading(Reading::PowerInstant));
        gpu_family("zeus_gpu_power_average_watts", "Average GPU power over the driver's window (NVML_FI_DEV_POWER_AVERAGE)",
                   MetricType::Gauge, "watts", reading(Reading::PowerAverage));
        gpu_family("zeus_gpu_memory_power_average_watts", "Average GPU memory power", MetricType::Gauge, "watts",
                   reading(Reading::MemoryPower));
        gpu_family("zeus_gpu_temperature_celsius", "GPU die temperature", MetricType::Gauge, "celsius",
                   reading(Reading::Temperature));
        gpu_family("zeus_gpu_power_limit_watts", "GPU power management limit", MetricType::Gauge, "watts",
                   reading(Reading::PowerLimit));
        gpu_family("zeus_gpu_sm_clock_hertz", "Current SM clock", MetricType::Gauge, "hertz", reading(Reading::SmClock));
        gpu_family("zeus_gpu_energy_resets", "Times the GPU's energy counter restarted (driver reload)",
                   MetricType::Counter, "", [](const GpuState& s) { return s.counter_resets.value; });

        if (ledger_) attribution_families(out);

        auto cpu_family = [&](std::string name, std::string help, const MonotonicValue CpuState::*member) {
            MetricFamily f{std::move(name), std::move(help), MetricType::Counter, "joules", {}, {}};
            for (const auto& state : cpu_states_) {
                if (const auto& v = (state.*member).value) f.samples.push_back({state.labels, *v});
            }
            out.push_back(std::move(f));
        };
        cpu_family("zeus_cpu_package_energy_joules", "CPU package energy (RAPL) since the exporter started",
                   &CpuState::package_j);
        cpu_family("zeus_cpu_dram_energy_joules", "DRAM energy of the package (RAPL) since the exporter started",
                   &CpuState::dram_j);

        MetricFamily errors{"zeus_exporter_read_errors", "Device readings that failed and were left out of the scrape",
                            MetricType::Counter, "", {}, {}};
        {
            std::lock_guard lock(errors_mutex_);
            for (const auto& [key, count] : errors_) {
                errors.samples.push_back({{{"device", key.first}, {"reason", key.second}, {hostname_label(), options_.hostname}},
                                          static_cast<double>(count)});
            }
        }
        out.push_back(std::move(errors));
        const DeviceMetricsStats s = stats();
        out.push_back({"zeus_exporter_sweeps", "Sampling sweeps over every device", MetricType::Counter, "",
                       {{{}, static_cast<double>(s.sweeps)}}, {}});
        out.push_back({"zeus_exporter_sampling_cpu_seconds", "CPU time the exporter spent reading devices",
                       MetricType::Counter, "seconds",
                       {{{}, std::chrono::duration<double>(s.sampling_cpu_time).count()}}, {}});
        out.push_back({"zeus_exporter_sweep_duration_seconds", "How long the last sweep over every device took",
                       MetricType::Gauge, "seconds",
                       {{{}, std::chrono::duration<double>(s.last_sweep_duration).count()}}, {}});
        return out;
    }

    const GpuState* state_of(std::size_t index) const {
        for (const auto& state : gpu_states_) {
            if (state.index == index) return &state;
        }
        return nullptr;
    }

    // Not namespace, pod and container: Prometheus's Kubernetes discovery gives
    // every target those labels (the exporter's own pod), and a clash renames ours.
    struct PodLabels {
        std::string pod_namespace;
        std::string pod_name;
        std::string container_name;
    };
    // A GPU holder's key has its names; other workloads are named by the pod namer, if it knows them.
    PodLabels pod_labels(const attribution::WorkloadKey& key) const {
        if (!key.pod_name.empty()) return {key.pod_namespace, key.pod_name, key.container_name};
        PodLabels labels;
        if (!pod_namer_) return labels;
        if (const auto* pod = pod_namer_->pod(key.pod_uid)) labels = {pod->pod_namespace, pod->name, ""};
        if (const auto* container = pod_namer_->container(key.container_id)) labels.container_name = *container;
        return labels;
    }

    void attribution_families(std::vector<MetricFamily>& out) const {
        MetricFamily workloads{"zeus_workload_gpu_energy_joules",
                               "Energy of the GPU attributed to a workload (docs/attribution.md); with the remainder, "
                               "adds up to zeus_gpu_energy_joules_total",
                               MetricType::Counter,
                               "joules",
                               {},
                               {}};
        for (const auto& [key, total] : ledger_->workloads()) {
            const GpuState* state = state_of(key.gpu);
            if (state == nullptr) continue;
            Labels labels = state->labels;
            labels.push_back({"kind", key.kind});
            const PodLabels pod = pod_labels(key);
            for (const auto& [name, value] : {std::pair{"pod_uid", &key.pod_uid},
                                              {"pod_namespace", &pod.pod_namespace},
                                              {"pod_name", &pod.pod_name},
                                              {"container_id", &key.container_id},
                                              {"container_name", &pod.container_name},
                                              {"slurm_job", &key.slurm_job},
                                              {"user", &key.user},
                                              {"pid", &key.pid}}) {
                if (!value->empty()) labels.push_back({name, *value});
            }
            labels.push_back({"attribution", std::string(to_string(key.method))});
            workloads.samples.push_back({std::move(labels), static_cast<double>(total.energy_mj) / 1000.0});
        }
        out.push_back(std::move(workloads));
        MetricFamily remainder{"zeus_workload_gpu_remainder_energy_joules",
                               "Energy of the GPU attributed to no live workload, by reason (docs/attribution.md)",
                               MetricType::Counter,
                               "joules",
                               {},
                               {}};
        for (const auto& state : gpu_states_) {
            if (!state.energy_j.value) continue;
            for (std::size_t r = 0; r < static_cast<std::size_t>(attribution::RemainderReason::Count); ++r) {
                const auto reason = static_cast<attribution::RemainderReason>(r);
                Labels labels = state.labels;
                labels.push_back({"reason", std::string(to_string(reason))});
                remainder.samples.push_back(
                    {std::move(labels), static_cast<double>(ledger_->remainder_mj(state.index, reason)) / 1000.0});
            }
        }
        out.push_back(std::move(remainder));
    }

    void publish() {
        const auto all = families();
        auto text = std::make_shared<const std::string>(render(all, ExpositionFormat::PrometheusText));
        auto om = std::make_shared<const std::string>(render(all, ExpositionFormat::OpenMetrics));
        std::lock_guard lock(published_mutex_);
        text_ = std::move(text);
        openmetrics_ = std::move(om);
    }

    const Gpus& gpus_;
    const Cpus* cpus_;
    DeviceMetricsOptions options_;
    std::vector<GpuState> gpu_states_;
    std::vector<CpuState> cpu_states_;

    std::mutex sweep_mutex_;
    mutable std::mutex errors_mutex_;
    std::map<std::pair<std::string, std::string>, std::uint64_t> errors_;
    std::set<std::tuple<std::string, std::string, ErrorCode>> first_seen_;
    mutable std::mutex stats_mutex_;
    DeviceMetricsStats stats_;
    mutable std::mutex published_mutex_;
    std::shared_ptr<const std::string> text_;
    std::shared_ptr<const std::string> openmetrics_;
    // Attribution (options_.attribution), used by the sampling thread only.
    std::unique_ptr<attribution::GpusProcessSource> process_source_;
    std::unique_ptr<attribution::Attributor> attributor_;
    std::unique_ptr<attribution::WorkloadResolver> resolver_;
    std::unique_ptr<attribution::WorkloadLedger> ledger_;
    std::unique_ptr<attribution::PodNamer> pod_namer_;  // with AttributionOptions::pod_resources
    std::optional<Result<std::vector<attribution::ContainerAllocation>>> pass_allocations_;
    std::jthread thread_;  // last: stopped before the state it reads goes
};

}  // namespace

Result<std::unique_ptr<DeviceMetrics>> DeviceMetrics::start(const Gpus& gpus, const Cpus* cpus,
                                                           DeviceMetricsOptions options) {
    auto metrics = std::make_unique<DeviceMetricsImpl>(gpus, cpus, std::move(options));
    if (auto s = metrics->init(); !s) return s.error();
    return std::unique_ptr<DeviceMetrics>(std::move(metrics));
}

}  // namespace zeus::metrics
