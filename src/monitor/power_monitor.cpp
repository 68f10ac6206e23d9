#include "zeus/monitor/power_monitor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "monitor/power_sampling_thread.hpp"
#include "monitor/power_selection.hpp"
#include "monitor/power_series.hpp"
#include "monitor/power_timing.hpp"

namespace zeus {

namespace {

using namespace std::chrono_literals;
using monitor_detail::SampleSeries;

constexpr std::array kAllDomains{PowerDomain::DeviceInstant, PowerDomain::DeviceAverage, PowerDomain::MemoryAverage};

// §2.3: never slower than 0.1 s; a GPU that shows no change gives the
// original's fallback (0.1 s before halving).
constexpr std::chrono::nanoseconds kMaxUpdatePeriod = 100ms;
constexpr std::chrono::nanoseconds kNoChangeUpdatePeriod = 50ms;
constexpr std::chrono::nanoseconds kMinUpdatePeriod = 1ms;
// How long inference may watch one GPU model (2.5 periods of the slowest
// sensor that matters: anything slower is clamped to 0.1 s anyway).
constexpr std::chrono::nanoseconds kInferenceDeadline = 250ms;
// While sampling, the latest value is held through this many periods of
// failed reads before the time after the last good read counts as unknown.
constexpr int kFailuresHeldFor = 5;

struct PowerSeries {
    SampleSeries<PowerSample> samples;
    std::int64_t last_mw = -1;                // the last stored value, for dedup
    std::optional<Timestamp> last_good_poll;  // when a read last succeeded
    bool last_read_ok = false;
};

class PowerMonitorImpl final : public PowerMonitor {
  public:
    PowerMonitorImpl(const Gpus& gpus, std::vector<unsigned> indices, std::vector<PowerDomain> domains,
                     std::map<PowerDomain, std::vector<unsigned>> monitored, std::chrono::nanoseconds period,
                     std::size_t max_samples)
        : gpus_(gpus), indices_(std::move(indices)), domains_(std::move(domains)), period_(period) {
        for (const auto& [domain, gpu_list] : monitored) {
            for (unsigned gpu : gpu_list) {
                series_[domain].emplace(gpu, PowerSeries{SampleSeries<PowerSample>(max_samples), -1, {}, false});
                jobs_.push_back({domain, gpu, nullptr});
            }
        }
        for (auto& job : jobs_) job.series = &series_[job.domain].at(job.gpu);
    }

    ~PowerMonitorImpl() override { thread_.stop(); }

    void run() {
        thread_.start(period_, [this] { sweep(); });
    }

    void stop() override { thread_.stop(); }

    [[nodiscard]] std::chrono::nanoseconds update_period() const override { return period_; }
    [[nodiscard]] std::vector<unsigned> gpu_indices() const override { return indices_; }
    [[nodiscard]] std::vector<PowerDomain> domains() const override { return domains_; }

    [[nodiscard]] MonitorStats stats() const override {
        std::lock_guard lock(mutex_);
        MonitorStats s = stats_;
        s.stored_samples = 0;
        for (const auto& [domain, by_gpu] : series_) {
            for (const auto& [gpu, series] : by_gpu) s.stored_samples += series.samples.size();
        }
        s.sampling_cpu_time = thread_.cpu_time();
        return s;
    }

    [[nodiscard]] Result<std::vector<PowerSample>> power_timeline(unsigned gpu, PowerDomain domain,
                                                                  std::optional<Timestamp> start,
                                                                  std::optional<Timestamp> end) const override {
        std::lock_guard lock(mutex_);
        auto found = find(gpu, domain);
        if (!found) return found.error();
        return (*found)->samples.range(start, end);
    }

    [[nodiscard]] std::map<PowerDomain, std::map<unsigned, std::vector<PowerSample>>> all_power_timelines(
        std::optional<Timestamp> start, std::optional<Timestamp> end) const override {
        std::lock_guard lock(mutex_);
        std::map<PowerDomain, std::map<unsigned, std::vector<PowerSample>>> out;
        for (const auto& [domain, by_gpu] : series_) {
            for (const auto& [gpu, series] : by_gpu) out[domain][gpu] = series.samples.range(start, end);
        }
        return out;
    }

    [[nodiscard]] Result<std::map<unsigned, Result<Joules>>> energy_by_gpu(Timestamp start, Timestamp end,
                                                                           PowerDomain domain) const override {
        if (end < start) {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("energy window ends {:.6f} s before it starts", Seconds(start - end).count()),
                         "pass the earlier time as `start`", 0};
        }
        const Timestamp now = MonitorClock::now();
        std::lock_guard lock(mutex_);
        auto by_gpu = series_.find(domain);
        if (by_gpu == series_.end()) return not_monitored(domain);
        std::map<unsigned, Result<Joules>> out;
        for (const auto& [gpu, series] : by_gpu->second) {
            if (auto covered = check_covered(gpu, domain, series, start, end, now); !covered) {
                out.emplace(gpu, covered.error());
                continue;
            }
            out.emplace(gpu, Joules(series.samples.integrate(start, end, [](const PowerSample& s) {
                            return s.power.count();
                        })));
        }
        return out;
    }

    [[nodiscard]] std::optional<std::pair<Timestamp, Timestamp>> covered_span(PowerDomain domain) const override {
        const Timestamp now = MonitorClock::now();
        std::lock_guard lock(mutex_);
        auto by_gpu = series_.find(domain);
        if (by_gpu == series_.end()) return std::nullopt;
        std::optional<std::pair<Timestamp, Timestamp>> span;
        for (const auto& [gpu, series] : by_gpu->second) {
            if (series.samples.empty()) continue;
            const auto [first, last] = span_of(series, now);
            span =
                span ? std::pair{std::min(span->first, first), std::max(span->second, last)} : std::pair{first, last};
        }
        return span;
    }

    [[nodiscard]] Result<std::map<unsigned, Watts>> power(std::optional<Timestamp> at,
                                                         PowerDomain domain) const override {
        const Timestamp now = MonitorClock::now();
        std::lock_guard lock(mutex_);
        auto by_gpu = series_.find(domain);
        if (by_gpu == series_.end()) return not_monitored(domain);
        std::map<unsigned, Watts> out;
        for (const auto& [gpu, series] : by_gpu->second) {
            if (series.samples.empty()) return no_sample(gpu, domain);
            if (!at) {
                out[gpu] = series.samples.back().power;
                continue;
            }
            if (auto covered = check_covered(gpu, domain, series, *at, *at, now); !covered) return covered.error();
            out[gpu] = series.samples[*series.samples.in_force(*at)].power;
        }
        return out;
    }

  private:
    struct Job {
        PowerDomain domain;
        unsigned gpu;
        PowerSeries* series;
    };

    // One round over every GPU and domain. Reads happen without the lock
    // (they take microseconds to milliseconds); storing takes it once.
    void sweep() {
        outcomes_.clear();
        for (const Job& job : jobs_) {
            auto reading = gpus_[job.gpu].power(job.domain);
            outcomes_.push_back({std::move(reading), MonitorClock::now(), std::chrono::system_clock::now()});
        }
        std::lock_guard lock(mutex_);
        ++stats_.sweeps;
        for (std::size_t i = 0; i < jobs_.size(); ++i) {
            PowerSeries& series = *jobs_[i].series;
            auto& outcome = outcomes_[i];
            ++stats_.reads;
            if (!outcome.reading || outcome.reading->power.count() <= 0) {
                ++stats_.failed_reads;
                stats_.last_error = outcome.reading
                                        ? Error{ErrorCode::NoData,
                                                fmt::format("GPU {} reported {} mW of {} power", jobs_[i].gpu,
                                                            outcome.reading->power.count(), to_string(jobs_[i].domain)),
                                                "the reading was skipped", 0}
                                        : outcome.reading.error();
                series.last_read_ok = false;
                continue;
            }
            const std::int64_t mw = outcome.reading->power.count();
            if (mw != series.last_mw) {
                const Timestamp t = monitor_detail::sample_time(outcome.polled, outcome.polled_wall,
                                                                outcome.reading->refreshed_at, series.last_good_poll);
                series.samples.push(PowerSample{t, Watts(static_cast<double>(mw) / 1000.0)});
                series.last_mw = mw;
            }
            series.last_good_poll = outcome.polled;
            series.last_read_ok = true;
        }
    }

    struct Outcome {
        Result<PowerReading> reading;
        Timestamp polled;
        std::chrono::system_clock::time_point polled_wall;
    };

    [[nodiscard]] Result<const PowerSeries*> find(unsigned gpu, PowerDomain domain) const {
        if (std::find(indices_.begin(), indices_.end(), gpu) == indices_.end()) {
            return Error{ErrorCode::NotFound, fmt::format("GPU {} is not monitored (monitored: {})", gpu,
                                                          fmt::join(indices_, ", ")),
                         "pass one of the monitored GPU indices", 0};
        }
        auto by_gpu = series_.find(domain);
        if (by_gpu == series_.end()) return not_monitored(domain);
        auto it = by_gpu->second.find(gpu);
        if (it == by_gpu->second.end()) {
            return Error{ErrorCode::NotSupported,
                         fmt::format("GPU {} does not support {} power: {}", gpu, to_string(domain),
                                     gpus_[gpu].capabilities().power(domain).support.reason),
                         "query another domain for this GPU", 0};
        }
        return &it->second;
    }

    [[nodiscard]] Error not_monitored(PowerDomain domain) const {
        std::vector<std::string> names;
        for (PowerDomain d : domains_) names.emplace_back(to_string(d));
        return Error{ErrorCode::NotFound,
                     fmt::format("{} power is not monitored (monitored: {})", to_string(domain), fmt::join(names, ", ")),
                     "add the domain to PowerMonitorOptions::domains", 0};
    }

    [[nodiscard]] static Error no_sample(unsigned gpu, PowerDomain domain) {
        return Error{ErrorCode::NoData, fmt::format("no {} power sample of GPU {} yet", to_string(domain), gpu),
                     "every read so far failed; see PowerMonitor::stats().last_error", 0};
    }

    // Covered: from the oldest kept sample to the last successful read, or
    // to now while the thread is sampling and reads succeed (a few failed
    // reads in a row are tolerated: the last value is held through them).
    // [first sample, last time the power is known at] of a series with samples.
    [[nodiscard]] std::pair<Timestamp, Timestamp> span_of(const PowerSeries& series, Timestamp now) const {
        const Timestamp first = series.samples.front().time;
        Timestamp last = series.last_good_poll.value_or(series.samples.back().time);
        if (thread_.running() && (series.last_read_ok || now - last <= kFailuresHeldFor * period_)) {
            last = std::max(last, now);
        }
        return {first, last};
    }

    [[nodiscard]] Status check_covered(unsigned gpu, PowerDomain domain, const PowerSeries& series, Timestamp start,
                                       Timestamp end, Timestamp now) const {
        if (series.samples.empty()) return no_sample(gpu, domain);
        const auto [first, last] = span_of(series, now);
        if (start >= first && end <= last) return {};
        const auto rel = [&](Timestamp t) { return Seconds(t - origin_).count(); };
        return Error{ErrorCode::NoData,
                     fmt::format("{} power of GPU {} is known from {:.3f} s to {:.3f} s after the monitor started, "
                                 "not over [{:.3f} s, {:.3f} s]",
                                 to_string(domain), gpu, rel(first), rel(last), rel(start), rel(end)),
                     start < first ? "start the window after the monitor started (or raise max_samples_per_gpu)"
                                   : "end the window before the monitor stopped (or while reads succeed)",
                     0};
    }

    const Gpus& gpus_;
    const std::vector<unsigned> indices_;
    const std::vector<PowerDomain> domains_;
    const std::chrono::nanoseconds period_;
    const Timestamp origin_ = MonitorClock::now();
    std::vector<Job> jobs_;
    std::vector<Outcome> outcomes_;  // sweep scratch, reused (only the sampling thread touches it)
    mutable std::mutex mutex_;
    std::map<PowerDomain, std::map<unsigned, PowerSeries>> series_;
    MonitorStats stats_;
    monitor_detail::SamplingThread thread_;
};

// §2.3 for one GPU: which domain to watch (instant, else average).
std::optional<PowerDomain> inference_domain(const Gpu& gpu) {
    if (gpu.capabilities().instant_power.support.supported) return PowerDomain::DeviceInstant;
    if (gpu.capabilities().average_power.support.supported) return PowerDomain::DeviceAverage;
    return std::nullopt;
}

}  // namespace

Result<std::map<unsigned, Joules>> PowerMonitor::energy(Timestamp start, Timestamp end, PowerDomain domain) const {
    auto by_gpu = energy_by_gpu(start, end, domain);
    if (!by_gpu) return by_gpu.error();
    std::map<unsigned, Joules> out;
    for (auto& [gpu, energy] : *by_gpu) {
        if (!energy) return energy.error();
        out.emplace_hint(out.end(), gpu, *energy);
    }
    return out;
}

Result<std::chrono::nanoseconds> infer_counter_update_period(const Gpu& gpu, PowerDomain domain, std::size_t budget) {
    budget = std::max<std::size_t>(budget, 2);
    // Reads are spread over the deadline so that a cheap read (the simulator
    // answers in microseconds) still spans several sensor periods.
    const auto spacing = kInferenceDeadline / static_cast<std::int64_t>(budget);
    const auto deadline = MonitorClock::now() + kInferenceDeadline;
    std::optional<PowerReading> previous;
    // Plain values with flags rather than optionals (GCC 12 sees the latter
    // as maybe-uninitialized here).
    bool have_change = false;
    std::chrono::nanoseconds last_change{0};  // on one clock: wall refresh time or steady poll time
    bool have_shortest = false;
    std::chrono::nanoseconds shortest{0};
    int intervals = 0;
    bool stamped = true;
    for (std::size_t i = 0; i < budget && MonitorClock::now() < deadline; ++i) {
        if (i > 0) std::this_thread::sleep_for(spacing);
        auto reading = gpu.power(domain);
        const auto polled = MonitorClock::now().time_since_epoch();
        if (!reading) {
            if (!previous) return reading.error();
            continue;
        }
        if (previous) {
            // A new refresh time marks a sensor update even when the value is
            // unchanged (steady power); without times, a changed value does.
            const bool both_stamped = reading->refreshed_at && previous->refreshed_at;
            if (stamped && !both_stamped) {  // times stopped coming: restart on the poll clock
                stamped = false;
                have_change = false;
                have_shortest = false;
                intervals = 0;
            }
            const bool changed = stamped ? *reading->refreshed_at != *previous->refreshed_at
                                         : reading->power != previous->power;
            if (changed) {
                const auto when = stamped ? reading->refreshed_at->time_since_epoch() : polled;
                if (have_change) {
                    const auto interval = std::chrono::duration_cast<std::chrono::nanoseconds>(when - last_change);
                    if (interval > 0ns) {
                        shortest = have_shortest ? std::min(shortest, interval) : interval;
                        have_shortest = true;
                        ++intervals;
                    }
                }
                have_change = true;
                last_change = std::chrono::duration_cast<std::chrono::nanoseconds>(when);
                // Refresh times are exact, so two intervals suffice; changes of
                // value need a few more to find the shortest.
                if (intervals >= (stamped ? 2 : 3)) break;
            }
        }
        previous = *reading;
    }
    if (!have_shortest) return kNoChangeUpdatePeriod;
    return std::clamp<std::chrono::nanoseconds>(shortest / 2, kMinUpdatePeriod, kMaxUpdatePeriod);
}

Result<std::unique_ptr<PowerMonitor>> PowerMonitor::start(const Gpus& gpus, PowerMonitorOptions options) {
    // GPUs: the requested ones (each must exist and work), or every available one.
    auto selected = monitor_detail::select_gpus(gpus, options.gpu_indices);
    if (!selected) return selected.error();
    std::vector<unsigned> indices = std::move(selected).value();

    if (options.update_period && *options.update_period <= std::chrono::nanoseconds::zero()) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("update period must be positive, got {} ns", options.update_period->count()),
                     "pass a positive period, or none to infer it from the GPUs", 0};
    }

    // Domains: the requested ones (each supported by at least one selected
    // GPU), or every domain some selected GPU supports. A GPU that lacks a
    // monitored domain simply has no series in it.
    const bool explicit_domains = !options.domains.empty();
    std::vector<PowerDomain> wanted;
    for (PowerDomain d : explicit_domains ? options.domains : std::vector<PowerDomain>(kAllDomains.begin(), kAllDomains.end())) {
        if (std::find(wanted.begin(), wanted.end(), d) == wanted.end()) wanted.push_back(d);
    }
    std::vector<PowerDomain> domains;
    std::map<PowerDomain, std::vector<unsigned>> monitored;
    for (PowerDomain d : wanted) {
        std::vector<unsigned> supporting;
        for (unsigned i : indices) {
            const Capability& cap = gpus[i].capabilities().power(d).support;
            // A probe that failed for a passing reason is retried when asked for.
            if (cap.supported || (explicit_domains && !cap.definitive)) supporting.push_back(i);
        }
        if (supporting.empty()) {
            if (!explicit_domains) continue;
            return Error{ErrorCode::NotSupported,
                         fmt::format("requested power domain {} is not supported by any selected GPU (GPU {}: {})",
                                     to_string(d), indices.front(),
                                     gpus[indices.front()].capabilities().power(d).support.reason),
                         "leave PowerMonitorOptions::domains empty to monitor every supported domain", 0};
        }
        domains.push_back(d);
        monitored[d] = std::move(supporting);
    }
    if (domains.empty()) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("no selected GPU can read its power (GPU {}: {})", indices.front(),
                                 gpus[indices.front()].capabilities().instant_power.support.reason),
                     {}, 0};
    }

    std::chrono::nanoseconds period = kMaxUpdatePeriod;
    if (options.update_period) {
        period = *options.update_period;
    } else {
        // §2.3: once per GPU model; the fastest model wins, then halved (done by
        // the single-GPU inference) and capped at 0.1 s. A GPU with neither
        // instant nor average power gives 0.2 s, i.e. the cap.
        std::set<std::string> seen;
        for (unsigned i : indices) {
            if (!seen.insert(gpus[i].identity().name).second) continue;
            auto domain = inference_domain(gpus[i]);
            if (!domain) continue;
            auto inferred = infer_counter_update_period(gpus[i], *domain);
            if (inferred) period = std::min(period, *inferred);
        }
    }

    auto monitor = std::make_unique<PowerMonitorImpl>(gpus, std::move(indices), std::move(domains),
                                                      std::move(monitored), period, options.max_samples_per_gpu);
    monitor->run();
    return std::unique_ptr<PowerMonitor>(std::move(monitor));
}

}  // namespace zeus
