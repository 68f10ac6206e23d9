#include "zeus/monitor/temperature_monitor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "monitor/power_sampling_thread.hpp"
#include "monitor/power_selection.hpp"
#include "monitor/power_series.hpp"

namespace zeus {

namespace {

using monitor_detail::SampleSeries;

struct TemperatureSeries {
    SampleSeries<TemperatureSample> samples;
    std::optional<Celsius> last;               // the last stored value, for dedup
    std::optional<Timestamp> last_good_poll;  // when a read last succeeded
    bool last_read_ok = false;
};

class TemperatureMonitorImpl final : public TemperatureMonitor {
  public:
    TemperatureMonitorImpl(const Gpus& gpus, std::vector<unsigned> indices, std::chrono::nanoseconds period,
                           std::size_t max_samples)
        : gpus_(gpus), indices_(std::move(indices)), period_(period) {
        for (unsigned gpu : indices_) series_.emplace(gpu, TemperatureSeries{SampleSeries<TemperatureSample>(max_samples), {}, {}, false});
    }
    ~TemperatureMonitorImpl() override { thread_.stop(); }

    void run() {
        thread_.start(period_, [this] { sweep(); });
    }
    void stop() override { thread_.stop(); }

    [[nodiscard]] std::chrono::nanoseconds update_period() const override { return period_; }
    [[nodiscard]] std::vector<unsigned> gpu_indices() const override { return indices_; }
    [[nodiscard]] MonitorStats stats() const override {
        std::lock_guard lock(mutex_);
        MonitorStats s = stats_;
        s.stored_samples = 0;
        for (const auto& [gpu, series] : series_) s.stored_samples += series.samples.size();
        s.sampling_cpu_time = thread_.cpu_time();
        return s;
    }

    [[nodiscard]] Result<std::vector<TemperatureSample>> temperature_timeline(
        unsigned gpu, std::optional<Timestamp> start, std::optional<Timestamp> end) const override {
        std::lock_guard lock(mutex_);
        auto it = series_.find(gpu);
        if (it == series_.end()) return not_monitored(gpu);
        return it->second.samples.range(start, end);
    }

    [[nodiscard]] std::map<unsigned, std::vector<TemperatureSample>> all_temperature_timelines(
        std::optional<Timestamp> start, std::optional<Timestamp> end) const override {
        std::lock_guard lock(mutex_);
        std::map<unsigned, std::vector<TemperatureSample>> out;
        for (const auto& [gpu, series] : series_) out[gpu] = series.samples.range(start, end);
        return out;
    }

    [[nodiscard]] Result<std::map<unsigned, Celsius>> temperature(std::optional<Timestamp> at) const override {
        const Timestamp now = MonitorClock::now();
        std::lock_guard lock(mutex_);
        std::map<unsigned, Celsius> out;
        for (const auto& [gpu, series] : series_) {
            if (series.samples.empty()) {
                return Error{ErrorCode::NoData, fmt::format("no temperature sample of GPU {} yet", gpu),
                             "every read so far failed; see TemperatureMonitor::stats().last_error", 0};
            }
            if (!at) {
                out[gpu] = series.samples.back().temperature;
                continue;
            }
            const Timestamp first = series.samples.front().time;
            Timestamp last = series.last_good_poll.value_or(series.samples.back().time);
            if (thread_.running() && (series.last_read_ok || now - last <= 5 * period_)) last = std::max(last, now);
            if (*at < first || *at > last) {
                const auto rel = [&](Timestamp t) { return Seconds(t - origin_).count(); };
                return Error{ErrorCode::NoData,
                             fmt::format("the temperature of GPU {} is known from {:.3f} s to {:.3f} s after the "
                                         "monitor started, not at {:.3f} s",
                                         gpu, rel(first), rel(last), rel(*at)),
                             "ask for a time the monitor covered (or raise max_samples_per_gpu)", 0};
            }
            out[gpu] = series.samples[*series.samples.in_force(*at)].temperature;
        }
        return out;
    }

  private:
    void sweep() {
        outcomes_.clear();
        for (unsigned gpu : indices_) outcomes_.push_back({gpus_[gpu].temperature(), MonitorClock::now()});
        std::lock_guard lock(mutex_);
        ++stats_.sweeps;
        for (std::size_t i = 0; i < indices_.size(); ++i) {
            TemperatureSeries& series = series_.at(indices_[i]);
            auto& [reading, polled] = outcomes_[i];
            ++stats_.reads;
            if (!reading) {
                ++stats_.failed_reads;
                stats_.last_error = reading.error();
                series.last_read_ok = false;
                continue;
            }
            if (!series.last || !same_value(*series.last, *reading)) {
                series.samples.push(TemperatureSample{polled, *reading});
                series.last = *reading;
            }
            series.last_good_poll = polled;
            series.last_read_ok = true;
        }
    }

    [[nodiscard]] Error not_monitored(unsigned gpu) const {
        return Error{ErrorCode::NotFound,
                     fmt::format("GPU {} is not monitored (monitored: {})", gpu, fmt::join(indices_, ", ")),
                     "pass one of the monitored GPU indices", 0};
    }

    struct Outcome {
        Result<Celsius> reading;
        Timestamp polled;
    };

    const Gpus& gpus_;
    const std::vector<unsigned> indices_;
    const std::chrono::nanoseconds period_;
    const Timestamp origin_ = MonitorClock::now();
    std::vector<Outcome> outcomes_;  // sweep scratch (sampling thread only)
    mutable std::mutex mutex_;
    std::map<unsigned, TemperatureSeries> series_;
    MonitorStats stats_;
    monitor_detail::SamplingThread thread_;
};

}  // namespace

Result<std::unique_ptr<TemperatureMonitor>> TemperatureMonitor::start(const Gpus& gpus,
                                                                      TemperatureMonitorOptions options) {
    if (options.update_period <= std::chrono::nanoseconds::zero()) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("update period must be positive, got {} ns", options.update_period.count()),
                     "pass a positive period (the default is 1 s)", 0};
    }
    auto selected = monitor_detail::select_gpus(gpus, options.gpu_indices);
    if (!selected) return selected.error();
    std::vector<unsigned> indices = std::move(selected).value();
    auto monitor = std::make_unique<TemperatureMonitorImpl>(gpus, std::move(indices), options.update_period,
                                                            options.max_samples_per_gpu);
    monitor->run();
    return std::unique_ptr<TemperatureMonitor>(std::move(monitor));
}

}  // namespace zeus
