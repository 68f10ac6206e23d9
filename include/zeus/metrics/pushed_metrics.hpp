// The original's pushed metrics (zeus.metric): EnergyHistogram,
// EnergyCumulativeCounter and PowerGauge, with its constructor arguments,
// defaults, metric names and labels, pushing to a Prometheus Pushgateway.
//
//   auto histogram = zeus::metrics::EnergyHistogram::open(gpus, &cpus, {0}, {0},
//                                                          "http://localhost:9091", "training").value();
//   histogram->begin_window("step");
//   train_step();
//   histogram->end_window("step");  // observes J per device, pushes
//
// Differences from the original, all in the user's favour (docs/metrics.md):
// background work runs in threads, not processes; a Pushgateway that is
// down is a warning naming the URL and the error, never an exception, and
// the next push carries the full value; the counter pushes what was drawn
// up to end_window instead of dropping the last period; all windows of one
// object share one registry, so a push never erases another window's series.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/exposition.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::metrics {

class Pushgateway;

// Where warnings go (default: "zeus: warning: ..." on stderr).
using WarningSink = std::function<void(const std::string&)>;
[[nodiscard]] WarningSink stderr_warnings();

// Bucket defaults of the original (its docstring's CPU list differs; this is its code's).
inline const std::vector<double> kDefaultGpuBuckets{50.0, 100.0, 200.0, 500.0, 1000.0};
inline const std::vector<double> kDefaultCpuBuckets{10.0, 50.0, 100.0, 500.0, 1000.0};
inline const std::vector<double> kDefaultDramBuckets{5.0, 10.0, 20.0, 50.0, 150.0};

// One measured window as the original's three histograms (one observation
// per device, default buckets, labels window and index): what
// `zeus run --push-gateway` pushes when the command ends.
[[nodiscard]] std::vector<MetricFamily> window_energy_histograms(const std::string& window,
                                                                 const Measurement& measurement,
                                                                 const WarningSink& warn = stderr_warnings());

class Metric {
  public:
    virtual ~Metric() = default;
    virtual Status begin_window(std::string_view name, bool sync_execution) = 0;
    virtual Status end_window(std::string_view name, bool sync_execution) = 0;
};

// Energy of a repeated code range per GPU, CPU package and DRAM, as
// histograms energy_monitor_{gpu,cpu,dram}_energy_joules{window,index},
// pushed at every end_window.
class EnergyHistogram final : public Metric {
  public:
    // `gpus` and `cpus` (may be null) must outlive the object. Errors: an
    // empty bucket list, an unknown index, a malformed URL or empty job.
    static Result<std::unique_ptr<EnergyHistogram>> open(
        const Gpus& gpus, const Cpus* cpus, std::vector<unsigned> cpu_indices, std::vector<unsigned> gpu_indices,
        const std::string& pushgateway_url, const std::string& job,
        std::vector<double> gpu_bucket_range = kDefaultGpuBuckets,
        std::vector<double> cpu_bucket_range = kDefaultCpuBuckets,
        std::vector<double> dram_bucket_range = kDefaultDramBuckets, WarningSink warn = stderr_warnings(),
        SyncFunction sync = {});
    ~EnergyHistogram() override;

    Status begin_window(std::string_view name, bool sync_execution = true) override;
    // Observes each device's joules, warns about values outside the buckets,
    // pushes (a failed push is a warning). Errors: a window not begun.
    Status end_window(std::string_view name, bool sync_execution = true) override;
    // end_window, returning what was measured.
    Result<Measurement> end_window_measured(std::string_view name, bool sync_execution = true);

    // What the next push carries.
    [[nodiscard]] std::vector<MetricFamily> families() const;

  private:
    struct Impl;
    explicit EnergyHistogram(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Energy drawn while a window is open, as counters
// energy_monitor_{gpu,cpu,dram}_energy_joules_total{window,index}, advanced
// and pushed every `update_period` by a thread per window.
class EnergyCumulativeCounter final : public Metric {
  public:
    static Result<std::unique_ptr<EnergyCumulativeCounter>> open(
        const Gpus& gpus, const Cpus* cpus, std::vector<unsigned> cpu_indices, std::vector<unsigned> gpu_indices,
        std::chrono::duration<double> update_period, const std::string& pushgateway_url, const std::string& job,
        WarningSink warn = stderr_warnings(), SyncFunction sync = {});
    ~EnergyCumulativeCounter() override;  // ends open windows (their last period is pushed)

    // Starts the window's thread. Errors: a window of that name already open.
    Status begin_window(std::string_view name, bool sync_execution = false) override;
    // Stops the thread after it has counted and pushed the energy up to now.
    // Errors: no such window.
    Status end_window(std::string_view name, bool sync_execution = false) override;

    [[nodiscard]] std::vector<MetricFamily> families() const;

  private:
    struct Impl;
    explicit EnergyCumulativeCounter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// GPU power as the gauge power_monitor_gpu_power_watts{window,index}, set
// to the latest reading and pushed every `update_period` while a window is open.
class PowerGauge final : public Metric {
  public:
    static Result<std::unique_ptr<PowerGauge>> open(const Gpus& gpus, std::vector<unsigned> gpu_indices,
                                                    std::chrono::duration<double> update_period,
                                                    const std::string& pushgateway_url, const std::string& job,
                                                    WarningSink warn = stderr_warnings(), SyncFunction sync = {});
    ~PowerGauge() override;

    // Errors: a window of that name already open ("already exists", as the original).
    Status begin_window(std::string_view name, bool sync_execution = false) override;
    Status end_window(std::string_view name, bool sync_execution = false) override;

    [[nodiscard]] std::vector<MetricFamily> families() const;

  private:
    struct Impl;
    explicit PowerGauge(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::metrics
