#include "zeus/metrics/pushed_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <stop_token>
#include <thread>
#include <utility>

#include "zeus/metrics/pushgateway.hpp"
#include "zeus/monitor/power_monitor.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::metrics {
namespace {

// Series of one family, keyed by the original's labels (window, index).
using SeriesKey = std::pair<std::string, unsigned>;

Labels window_index(const SeriesKey& key) { return {{"window", key.first}, {"index", std::to_string(key.second)}}; }

// Pushes, and turns a failure into one warning per failure streak (a
// gateway down for an hour is one line, not 3600), naming the URL and error.
class PushChannel {
  public:
    PushChannel(std::unique_ptr<Pushgateway> gateway, WarningSink warn)
        : gateway_(std::move(gateway)), warn_(std::move(warn)) {}

    void push(const std::vector<MetricFamily>& families) {
        std::lock_guard lock(mutex_);
        auto status = gateway_->push(families);
        if (!status) {
            if (!failing_ && warn_) {
                warn_(fmt::format("{}; the metrics are kept and the next push carries their full values",
                                  status.error().describe()));
            }
            failing_ = true;
        } else if (failing_) {
            failing_ = false;
            if (warn_) warn_(fmt::format("pushing metrics to {} works again", gateway_->push_url()));
        }
    }

  private:
    std::mutex mutex_;  // pushes in order, one at a time
    std::unique_ptr<Pushgateway> gateway_;
    WarningSink warn_;
    bool failing_ = false;
};

Result<std::shared_ptr<PushChannel>> open_channel(const std::string& url, const std::string& job, WarningSink warn) {
    auto gateway = Pushgateway::open(url, job);
    if (!gateway) return gateway.error();
    return std::make_shared<PushChannel>(std::move(gateway).value(), std::move(warn));
}

Status check_buckets(const std::vector<double>& buckets, std::string_view device) {
    if (buckets.empty()) {
        return Error{ErrorCode::InvalidArgument, fmt::format("{} bucket range cannot be empty", device),
                     "give at least one bucket bound, or leave the argument out to use the defaults", 0};
    }
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        if (!std::isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1])) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("{} bucket range must be finite and strictly ascending", device),
                         "list the bucket bounds in joules from smallest to largest, e.g. 50,100,200", 0};
        }
    }
    return {};
}

bool any_dram(const Cpus* cpus, const std::vector<unsigned>& cpu_indices) {
    if (cpus == nullptr) return false;
    return std::any_of(cpu_indices.begin(), cpu_indices.end(), [&](unsigned i) {
        auto cpu = cpus->at(i);
        return cpu && (*cpu)->has_dram();
    });
}

constexpr const char* kGpuEnergyName = "energy_monitor_gpu_energy_joules";
constexpr const char* kCpuEnergyName = "energy_monitor_cpu_energy_joules";
constexpr const char* kDramEnergyName = "energy_monitor_dram_energy_joules";

// Which of the three energy families an object has, as the original decides:
// GPU when GPUs are selected, CPU when CPUs are, DRAM when one of them has DRAM.
struct EnergyFamilies {
    bool gpu = false;
    bool cpu = false;
    bool dram = false;
};

// Sleeps `period` unless stopped first; true when stop was requested.
bool sleep_or_stop(const std::stop_token& stop, std::chrono::duration<double> period) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    wake.wait_for(lock, stop, std::chrono::duration_cast<std::chrono::nanoseconds>(period), [] { return false; });
    return stop.stop_requested();
}

Status check_period(std::chrono::duration<double> period) {
    if (!(period.count() > 0) || !std::isfinite(period.count())) {
        return Error{ErrorCode::InvalidArgument, fmt::format("update_period {} s is not positive", period.count()),
                     "give the push period in seconds, e.g. 1", 0};
    }
    return {};
}

// A window's name is its series' label value: refused unless UTF-8, which the
// Pushgateway and Prometheus require.
Status check_window_name(std::string_view kind, std::string_view name) {
    return require_utf8(fmt::format("the {} window name", kind), name);
}

// One thread per open window, stopped and joined by name.
class WindowThreads {
  public:
    using Body = std::function<void(std::stop_token)>;
    ~WindowThreads() { stop_all(); }

    // `first`, when given, runs before the thread starts (and fails the start).
    Status start(const std::string& name, std::string_view kind, Body body,
                 const std::function<Status()>& first = {}) {
        if (auto named = check_window_name(kind, name); !named) return named;
        std::lock_guard lock(mutex_);
        if (threads_.contains(name)) {
            return Error{ErrorCode::InvalidState, fmt::format("{} metric '{}' already exists.", kind, name),
                         "end the window before beginning it again, or use another name", 0};
        }
        if (first) {
            if (auto s = first(); !s) return s;
        }
        threads_.emplace(name, std::jthread(std::move(body)));
        return {};
    }
    Status stop(const std::string& name, std::string_view kind) {
        std::jthread thread;
        {
            std::lock_guard lock(mutex_);
            auto it = threads_.find(name);
            if (it == threads_.end()) {
                return Error{ErrorCode::NotFound, fmt::format("No active {} window found for '{}'.", kind, name),
                             "end only windows that were begun", 0};
            }
            thread = std::move(it->second);
            threads_.erase(it);
        }
        thread.request_stop();
        thread.join();
        return {};
    }
    void stop_all() {
        std::map<std::string, std::jthread> threads;
        {
            std::lock_guard lock(mutex_);
            threads.swap(threads_);
        }
        for (auto& [name, thread] : threads) thread.request_stop();
        threads.clear();  // joins
    }

  private:
    std::mutex mutex_;
    std::map<std::string, std::jthread> threads_;
};

// ---- EnergyHistogram ----

// The three histogram families and their series; not thread-safe (callers lock).
class EnergyHistograms {
  public:
    struct Series {
        std::vector<std::uint64_t> per_bucket;  // observations in (previous bound, bound]
        double sum = 0;
        std::uint64_t count = 0;
    };
    struct Family {
        const char* name;
        const char* help;
        const char* device;  // for warnings: "GPU", "CPU", "DRAM"
        std::vector<double> bounds;
        bool enabled = false;
        std::map<SeriesKey, Series> series;
    };

    EnergyHistograms(EnergyFamilies present, std::vector<double> gpu_bounds, std::vector<double> cpu_bounds,
                     std::vector<double> dram_bounds)
        : gpu_{kGpuEnergyName, "GPU energy consumption", "GPU", std::move(gpu_bounds), present.gpu, {}},
          cpu_{kCpuEnergyName, "CPU energy consumption", "CPU", std::move(cpu_bounds), present.cpu, {}},
          dram_{kDramEnergyName, "DRAM energy consumption", "DRAM", std::move(dram_bounds), present.dram, {}} {}

    void observe(const std::string& window, const Measurement& m, const WarningSink& warn) {
        observe(gpu_, window, m.gpu_energy, warn);
        observe(cpu_, window, m.cpu_energy, warn);
        observe(dram_, window, m.dram_energy, warn);
    }

    [[nodiscard]] std::vector<MetricFamily> families() const {
        std::vector<MetricFamily> out;
        render(gpu_, out);
        render(cpu_, out);
        render(dram_, out);
        return out;
    }

  private:
    static void observe(Family& family, const std::string& window, const std::map<unsigned, EnergyValue>& values,
                        const WarningSink& warn) {
        if (!family.enabled) return;
        for (const auto& [index, value] : values) {
            if (value.lost) continue;  // a lost GPU has no energy to observe, not 0 J
            const double joules = value.energy.count();
            auto& series = family.series[{window, index}];
            if (series.per_bucket.empty()) series.per_bucket.assign(family.bounds.size(), 0);
            const auto bucket = std::lower_bound(family.bounds.begin(), family.bounds.end(), joules);
            if (bucket != family.bounds.end()) ++series.per_bucket[bucket - family.bounds.begin()];
            series.sum += joules;
            ++series.count;
            if (!warn) continue;
            if (joules > family.bounds.back()) {
                warn(fmt::format("{} {} energy {} J exceeds the maximum bucket value of {} J", family.device, index,
                                 joules, family.bounds.back()));
            } else if (joules < family.bounds.front()) {
                warn(fmt::format("{} {} energy {} J is below the minimum bucket value of {} J", family.device, index,
                                 joules, family.bounds.front()));
            }
        }
    }

    static void render(const Family& family, std::vector<MetricFamily>& out) {
        if (!family.enabled) return;
        MetricFamily f{family.name, family.help, MetricType::Histogram, "joules", {}, {}};
        for (const auto& [key, series] : family.series) {
            HistogramSample h{window_index(key), {}, series.sum, series.count};
            std::uint64_t cumulative = 0;
            for (std::size_t i = 0; i < family.bounds.size(); ++i) {
                cumulative += series.per_bucket[i];
                h.buckets.emplace_back(family.bounds[i], cumulative);
            }
            f.histograms.push_back(std::move(h));
        }
        out.push_back(std::move(f));
    }

    Family gpu_;
    Family cpu_;
    Family dram_;
};

}  // namespace

WarningSink stderr_warnings() {
    return [](const std::string& message) { std::fprintf(stderr, "zeus: warning: %s\n", message.c_str()); };
}

std::vector<MetricFamily> window_energy_histograms(const std::string& window, const Measurement& measurement,
                                                   const WarningSink& warn) {
    EnergyHistograms histograms({!measurement.gpu_energy.empty(), !measurement.cpu_energy.empty(),
                                 !measurement.dram_energy.empty()},
                                kDefaultGpuBuckets, kDefaultCpuBuckets, kDefaultDramBuckets);
    histograms.observe(window, measurement, warn);
    return histograms.families();
}

struct EnergyHistogram::Impl {
    std::unique_ptr<EnergyMonitor> monitor;
    std::shared_ptr<PushChannel> channel;
    WarningSink warn;
    mutable std::mutex mutex;
    std::optional<EnergyHistograms> histograms;

    std::vector<MetricFamily> families() const {
        std::lock_guard lock(mutex);
        return histograms->families();
    }
};

Result<std::unique_ptr<EnergyHistogram>> EnergyHistogram::open(
    const Gpus& gpus, const Cpus* cpus, std::vector<unsigned> cpu_indices, std::vector<unsigned> gpu_indices,
    const std::string& pushgateway_url, const std::string& job, std::vector<double> gpu_bucket_range,
    std::vector<double> cpu_bucket_range, std::vector<double> dram_bucket_range, WarningSink warn,
    SyncFunction sync) {
    if (auto s = check_buckets(gpu_bucket_range, "GPU"); !s) return s.error();
    if (auto s = check_buckets(cpu_bucket_range, "CPU"); !s) return s.error();
    if (auto s = check_buckets(dram_bucket_range, "DRAM"); !s) return s.error();
    auto channel = open_channel(pushgateway_url, job, warn);
    if (!channel) return channel.error();
    auto impl = std::make_unique<Impl>();
    impl->histograms.emplace(EnergyFamilies{!gpu_indices.empty(), !cpu_indices.empty(), any_dram(cpus, cpu_indices)},
                             std::move(gpu_bucket_range), std::move(cpu_bucket_range), std::move(dram_bucket_range));
    EnergyMonitorOptions options;
    options.gpu_indices = std::move(gpu_indices);
    options.cpu_indices = std::move(cpu_indices);
    options.sync = std::move(sync);
    auto monitor = EnergyMonitor::open(gpus, cpus, nullptr, std::move(options));
    if (!monitor) return monitor.error();
    impl->monitor = std::move(monitor).value();
    impl->channel = std::move(channel).value();
    impl->warn = std::move(warn);
    return std::unique_ptr<EnergyHistogram>(new EnergyHistogram(std::move(impl)));
}

EnergyHistogram::EnergyHistogram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EnergyHistogram::~EnergyHistogram() = default;

Status EnergyHistogram::begin_window(std::string_view name, bool sync_execution) {
    if (auto named = check_window_name("EnergyHistogram", name); !named) return named;
    return impl_->monitor->begin_window(fmt::format("__EnergyHistogram_{}", name), sync_execution);
}

Status EnergyHistogram::end_window(std::string_view name, bool sync_execution) {
    auto measured = end_window_measured(name, sync_execution);
    if (!measured) return measured.error();
    return {};
}

Result<Measurement> EnergyHistogram::end_window_measured(std::string_view name, bool sync_execution) {
    auto measurement = impl_->monitor->end_window(fmt::format("__EnergyHistogram_{}", name), sync_execution);
    if (!measurement && measurement.error().code == ErrorCode::NotFound) {
        // Named as the user named it, not by the internal window's key.
        return Error{ErrorCode::NotFound, fmt::format("No active EnergyHistogram window found for '{}'.", name),
                     "end only windows that were begun", 0};
    }
    if (!measurement) return measurement.error();
    {
        std::lock_guard lock(impl_->mutex);
        impl_->histograms->observe(std::string(name), *measurement, impl_->warn);
    }
    impl_->channel->push(impl_->families());
    return measurement;
}

std::vector<MetricFamily> EnergyHistogram::families() const { return impl_->families(); }

// ---- EnergyCumulativeCounter ----

struct EnergyCumulativeCounter::Impl {
    std::unique_ptr<EnergyMonitor> monitor;
    std::shared_ptr<PushChannel> channel;
    WarningSink warn;
    SyncFunction sync;
    std::vector<unsigned> gpu_indices;
    std::chrono::duration<double> period{1.0};
    EnergyFamilies present;
    mutable std::mutex mutex;
    std::map<SeriesKey, double> gpu;
    std::map<SeriesKey, double> cpu;
    std::map<SeriesKey, double> dram;
    WindowThreads threads;  // last: joined before the rest goes

    std::vector<MetricFamily> families() const {
        std::lock_guard lock(mutex);
        std::vector<MetricFamily> out;
        auto add = [&](bool enabled, const char* name, const char* help, const std::map<SeriesKey, double>& series) {
            if (!enabled) return;
            MetricFamily f{name, help, MetricType::Counter, "joules", {}, {}};
            for (const auto& [key, joules] : series) f.samples.push_back({window_index(key), joules});
            out.push_back(std::move(f));
        };
        add(present.gpu, kGpuEnergyName, "GPU energy consumption", gpu);
        add(present.cpu, kCpuEnergyName, "CPU energy consumption", cpu);
        add(present.dram, kDramEnergyName, "DRAM energy consumption", dram);
        return out;
    }

    void add(std::map<SeriesKey, double>& series, const std::string& window,
             const std::map<unsigned, EnergyValue>& values) {
        for (const auto& [index, value] : values) {
            // A counter only goes up: a negative or non-finite value is not energy.
            // Zero is: the series exists from the window's first period (an idle
            // package's CPU and DRAM series are pushed, at 0, as the original's).
            const double joules = value.energy.count();
            if (std::isfinite(joules) && joules >= 0) series[{window, index}] += joules;
        }
    }

    static std::string period_key(const std::string& window) { return "__EnergyCumulativeCounter_" + window; }

    // One thread per window: count the energy of each period and push; when
    // stopped, the period in progress is ended, counted and pushed too. The
    // first period was begun by begin_window, so the counter covers the
    // window from its first instant; each next period begins right after the
    // previous one ends, before the push, so a slow gateway loses no energy.
    void loop(const std::string& window, const std::stop_token& stop) {
        const std::string key = period_key(window);
        bool open = true;
        while (true) {
            const bool stopping = sleep_or_stop(stop, period);
            std::optional<Result<Measurement>> measured;
            if (open) measured = monitor->end_window(key, false);
            open = false;
            if (!stopping) {
                auto begun = monitor->begin_window(key, false, true);
                open = static_cast<bool>(begun);
                if (!begun && warn) {
                    warn(fmt::format("EnergyCumulativeCounter '{}': {}", window, begun.error().describe()));
                }
            }
            if (measured && !*measured) {
                if (warn) warn(fmt::format("EnergyCumulativeCounter '{}': {}", window, measured->error().describe()));
            } else if (measured) {
                {
                    std::lock_guard lock(mutex);
                    add(gpu, window, (*measured)->gpu_energy);
                    add(cpu, window, (*measured)->cpu_energy);
                    add(dram, window, (*measured)->dram_energy);
                }
                channel->push(families());
            }
            if (stopping) return;
        }
    }
};

Result<std::unique_ptr<EnergyCumulativeCounter>> EnergyCumulativeCounter::open(
    const Gpus& gpus, const Cpus* cpus, std::vector<unsigned> cpu_indices, std::vector<unsigned> gpu_indices,
    std::chrono::duration<double> update_period, const std::string& pushgateway_url, const std::string& job,
    WarningSink warn, SyncFunction sync) {
    if (auto s = check_period(update_period); !s) return s.error();
    auto channel = open_channel(pushgateway_url, job, warn);
    if (!channel) return channel.error();
    auto impl = std::make_unique<Impl>();
    impl->present = {!gpu_indices.empty(), !cpu_indices.empty(), any_dram(cpus, cpu_indices)};
    impl->gpu_indices = gpu_indices;
    EnergyMonitorOptions options;
    options.gpu_indices = std::move(gpu_indices);
    options.cpu_indices = std::move(cpu_indices);
    auto monitor = EnergyMonitor::open(gpus, cpus, nullptr, std::move(options));
    if (!monitor) return monitor.error();
    impl->monitor = std::move(monitor).value();
    impl->channel = std::move(channel).value();
    impl->warn = std::move(warn);
    impl->sync = std::move(sync);
    impl->period = update_period;
    return std::unique_ptr<EnergyCumulativeCounter>(new EnergyCumulativeCounter(std::move(impl)));
}

EnergyCumulativeCounter::EnergyCumulativeCounter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EnergyCumulativeCounter::~EnergyCumulativeCounter() { impl_->threads.stop_all(); }

Status EnergyCumulativeCounter::begin_window(std::string_view name, bool sync_execution) {
    if (sync_execution && impl_->sync) impl_->sync(impl_->gpu_indices);
    const std::string window(name);
    Impl* impl = impl_.get();
    return impl_->threads.start(
        window, "EnergyCumulativeCounter", [impl, window](const std::stop_token& stop) { impl->loop(window, stop); },
        [impl, &window] { return impl->monitor->begin_window(Impl::period_key(window), false, true); });
}

Status EnergyCumulativeCounter::end_window(std::string_view name, bool sync_execution) {
    if (sync_execution && impl_->sync) impl_->sync(impl_->gpu_indices);
    return impl_->threads.stop(std::string(name), "EnergyCumulativeCounter");
}

std::vector<MetricFamily> EnergyCumulativeCounter::families() const { return impl_->families(); }

// ---- PowerGauge ----

struct PowerGauge::Impl {
    const Gpus* gpus = nullptr;
    std::vector<unsigned> gpu_indices;
    std::shared_ptr<PushChannel> channel;
    WarningSink warn;
    SyncFunction sync;
    std::chrono::duration<double> period{1.0};
    mutable std::mutex mutex;
    std::map<SeriesKey, double> watts;
    WindowThreads threads;

    std::vector<MetricFamily> families() const {
        std::lock_guard lock(mutex);
        MetricFamily f{"power_monitor_gpu_power_watts", "Records power consumption for GPU over time",
                       MetricType::Gauge, "watts", {}, {}};
        for (const auto& [key, value] : watts) f.samples.push_back({window_index(key), value});
        return {std::move(f)};
    }

    void loop(const std::string& window, const std::shared_ptr<PowerMonitor>& monitor, const std::stop_token& stop) {
        do {
            auto power = monitor->power();
            if (power) {
                std::lock_guard lock(mutex);
                for (const auto& [index, value] : *power) watts[{window, index}] = value.count();
            }
            channel->push(families());
        } while (!sleep_or_stop(stop, period));
    }
};

Result<std::unique_ptr<PowerGauge>> PowerGauge::open(const Gpus& gpus, std::vector<unsigned> gpu_indices,
                                                     std::chrono::duration<double> update_period,
                                                     const std::string& pushgateway_url, const std::string& job,
                                                     WarningSink warn, SyncFunction sync) {
    if (auto s = check_period(update_period); !s) return s.error();
    for (unsigned index : gpu_indices) {
        auto gpu = gpus.at(index);
        if (!gpu) return gpu.error();
    }
    auto channel = open_channel(pushgateway_url, job, warn);
    if (!channel) return channel.error();
    auto impl = std::make_unique<Impl>();
    impl->gpus = &gpus;
    impl->gpu_indices = std::move(gpu_indices);
    impl->channel = std::move(channel).value();
    impl->warn = std::move(warn);
    impl->sync = std::move(sync);
    impl->period = update_period;
    return std::unique_ptr<PowerGauge>(new PowerGauge(std::move(impl)));
}

PowerGauge::PowerGauge(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PowerGauge::~PowerGauge() { impl_->threads.stop_all(); }

Status PowerGauge::begin_window(std::string_view name, bool sync_execution) {
    if (sync_execution && impl_->sync) impl_->sync(impl_->gpu_indices);
    PowerMonitorOptions options;
    options.gpu_indices = impl_->gpu_indices;
    options.domains = {PowerDomain::DeviceInstant};
    auto monitor = PowerMonitor::start(*impl_->gpus, std::move(options));
    if (!monitor) return monitor.error();
    std::shared_ptr<PowerMonitor> shared = std::move(monitor).value();
    const std::string window(name);
    Impl* impl = impl_.get();
    return impl_->threads.start(window, "PowerGauge", [impl, window, shared](const std::stop_token& stop) {
        impl->loop(window, shared, stop);
    });
}

Status PowerGauge::end_window(std::string_view name, bool sync_execution) {
    if (sync_execution && impl_->sync) impl_->sync(impl_->gpu_indices);
    return impl_->threads.stop(std::string(name), "PowerGauge");
}

std::vector<MetricFamily> PowerGauge::families() const { return impl_->families(); }

}  // namespace zeus::metrics
