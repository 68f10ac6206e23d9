// Power timelines: one thread samples the power of a set of GPUs in every
// requested domain, stores each change (a repeated value is stored once, but
// integration treats it as held until the next change), and answers
// questions about any interval: the timeline, the energy, the power at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

using MonitorClock = std::chrono::steady_clock;
using Timestamp = MonitorClock::time_point;

// 16 bytes: the monitor's memory target is at most 32 bytes per stored sample.
struct PowerSample {
    Timestamp time;
    Watts power;
};

struct PowerMonitorOptions {
    std::vector<unsigned> gpu_indices;  // visible indices; empty = every available GPU
    // Sampling period; nullopt = inferred from how often the counters change
    // (half the fastest observed change interval, never slower than 0.1 s).
    std::optional<std::chrono::nanoseconds> update_period;
    std::vector<PowerDomain> domains;  // empty = every domain each GPU supports
    std::size_t max_samples_per_gpu = 0;  // per GPU and domain; 0 = unbounded (oldest dropped first)
};

// What a monitor's sampling thread has done so far (PowerMonitor and
// TemperatureMonitor): read failures are counted here instead of being
// stored as samples, and the thread's CPU time is what the overhead
// benchmark reports.
struct MonitorStats {
    std::uint64_t sweeps = 0;          // rounds over every GPU (and domain)
    std::uint64_t reads = 0;           // device reads attempted
    std::uint64_t failed_reads = 0;    // reads that returned an error (or a non-positive power)
    std::uint64_t stored_samples = 0;  // samples held now, after dedup and max_samples_per_gpu
    std::chrono::nanoseconds sampling_cpu_time{0};  // CPU time of the sampling thread
    std::optional<Error> last_error;   // the most recent failed read, if any
};

class PowerMonitor {
  public:
    // Starts sampling. `gpus` must outlive the monitor. Errors: unknown GPU
    // index, a domain no selected GPU supports, a non-positive period.
    static Result<std::unique_ptr<PowerMonitor>> start(const Gpus& gpus, PowerMonitorOptions options);

    virtual ~PowerMonitor() = default;
    // Stops and joins the sampling thread; queries keep working on what was stored.
    virtual void stop() = 0;

    [[nodiscard]] virtual std::chrono::nanoseconds update_period() const = 0;
    [[nodiscard]] virtual std::vector<unsigned> gpu_indices() const = 0;
    [[nodiscard]] virtual std::vector<PowerDomain> domains() const = 0;
    [[nodiscard]] virtual MonitorStats stats() const = 0;

    // Stored samples of one GPU and domain within [start, end] (both optional).
    [[nodiscard]] virtual Result<std::vector<PowerSample>> power_timeline(
        unsigned gpu, PowerDomain domain = PowerDomain::DeviceInstant, std::optional<Timestamp> start = std::nullopt,
        std::optional<Timestamp> end = std::nullopt) const = 0;
    [[nodiscard]] virtual std::map<PowerDomain, std::map<unsigned, std::vector<PowerSample>>> all_power_timelines(
        std::optional<Timestamp> start = std::nullopt, std::optional<Timestamp> end = std::nullopt) const = 0;

    // Energy of each GPU over [start, end], each GPU on its own: each stored
    // value is held until the next sample (as the sensor holds a reading
    // until its next refresh), so steady power integrates correctly although
    // it is stored once. This is the trapezoid rule over the readings as the
    // sensor produced them. A GPU whose power is not known over the whole
    // interval has the reason instead of a value (NoData: the interval starts
    // before the oldest kept sample, or ends after its last successful read,
    // e.g. the GPU was lost; while sampling and reading fine, the latest value
    // counts as held until now); the other GPUs are still answered. Errors of
    // the call itself: an interval that ends before it starts, a domain that
    // is not monitored.
    [[nodiscard]] virtual Result<std::map<unsigned, Result<Joules>>> energy_by_gpu(
        Timestamp start, Timestamp end, PowerDomain domain = PowerDomain::DeviceInstant) const = 0;
    // energy_by_gpu() when every GPU is known; otherwise the first GPU's reason.
    [[nodiscard]] Result<std::map<unsigned, Joules>> energy(Timestamp start, Timestamp end,
                                                          PowerDomain domain = PowerDomain::DeviceInstant) const;
    // The time the readings of `domain` cover, over all monitored GPUs: from the
    // earliest kept sample to the latest time any GPU's power is known at (now
    // while sampling and reading fine). nullopt before the first reading.
    // Callers that integrate "what was measured" of a longer interval clip it
    // to this span (as the original's PowerMonitor.get_energy does).
    [[nodiscard]] virtual std::optional<std::pair<Timestamp, Timestamp>> covered_span(
        PowerDomain domain = PowerDomain::DeviceInstant) const = 0;
    // Power of each GPU at `at` (default: the latest sample): the sample in force then.
    [[nodiscard]] virtual Result<std::map<unsigned, Watts>> power(
        std::optional<Timestamp> at = std::nullopt, PowerDomain domain = PowerDomain::DeviceInstant) const = 0;
};

// Infers how often a GPU's power readings change: samples `gpu` as fast as
// it can for up to `budget` reads and returns half the shortest interval
// between changes, capped at 100 ms (the original's rule).
[[nodiscard]] Result<std::chrono::nanoseconds> infer_counter_update_period(const Gpu& gpu, PowerDomain domain,
                                                                           std::size_t budget = 1000);

}  // namespace zeus
