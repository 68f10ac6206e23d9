// The attribution engine: splits each GPU's measured energy over an interval
// (the counter's ΔE, in integer millijoules) among the processes that used the
// GPU, plus an explicit remainder, so that the shares and the remainder add up
// to ΔE exactly over every interval and therefore over any sum of intervals.
//
// What is measured and what is estimated (docs/attribution.md):
//  - ΔE is measured (the GPU's energy counter).
//  - The idle part of ΔE is estimated as idle power × interval: idle power is
//    configured per GPU, or learned as the lowest average power seen over
//    intervals with no process on the GPU. It is the remainder's "idle" part
//    (IdlePolicy::Unattributed) or the processes' (IdlePolicy::ByAllocation).
//  - The rest (active energy) goes to the processes by a weight that says how
//    it was obtained (Method): one process alone gets all of it (exclusive);
//    several share it by their accumulated SM utilization samples
//    (utilization); without samples, in equal parts (equal_split). With no
//    process at all it is the remainder's "no_process" part.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "zeus/device/gpu_processes.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus::attribution {

// How a share was obtained.
enum class Method {
    Exclusive,    // the only process on the GPU in the interval: its share is the GPU's (less idle) exactly
    Utilization,  // weighted by the driver's per-process SM utilization samples accumulated over the interval
    EqualSplit,   // no usable utilization samples: equal parts among the running processes
    // Not the engine's: the energy no process was charged with (idle, no
    // process), given by the ledger to the pod the kubelet allocated the
    // whole GPU to (IdlePolicy::ByAllocation, WorkloadLedger::add).
    Allocation,
};
[[nodiscard]] std::string_view to_string(Method method);

// Who gets the idle part of a GPU's energy.
enum class IdlePolicy {
    // Nobody: it stays in the remainder, because on a shared GPU the idle draw
    // is caused by no one process (and would reward leaving a GPU allocated).
    Unattributed,
    // The processes on the GPU in equal parts: for GPUs allocated to one
    // workload at a time, where the owner is accountable for the whole GPU.
    ByAllocation,
};
[[nodiscard]] std::string_view to_string(IdlePolicy policy);
// "unattributed" or "allocation"; an Error naming the value and the choices otherwise.
[[nodiscard]] Result<IdlePolicy> parse_idle_policy(std::string_view text);

// Where the engine gets a GPU's processes: the device layer in production
// (GpuProcessSource), a scripted source in tests.
class ProcessSource {
  public:
    virtual ~ProcessSource() = default;
    [[nodiscard]] virtual Result<std::vector<GpuProcess>> running_processes(std::size_t gpu) = 0;
    // Samples newer than last_seen_us (0: everything the driver still holds).
    [[nodiscard]] virtual Result<ProcessUtilizationSamples> process_utilization(std::size_t gpu,
                                                                                std::uint64_t last_seen_us) = 0;
};

}  // namespace zeus::attribution
namespace zeus {
class Gpus;
}
namespace zeus::attribution {

// The device layer's GPUs as a ProcessSource: GPU i is gpus[i] (CUDA's order),
// answered by its backend's GpuProcessQuery, NotSupported without one.
class GpusProcessSource final : public ProcessSource {
  public:
    explicit GpusProcessSource(const Gpus& gpus) : gpus_(gpus) {}
    [[nodiscard]] Result<std::vector<GpuProcess>> running_processes(std::size_t gpu) override;
    [[nodiscard]] Result<ProcessUtilizationSamples> process_utilization(std::size_t gpu,
                                                                        std::uint64_t last_seen_us) override;

  private:
    const Gpus& gpus_;
};

struct Share {
    std::uint32_t pid = 0;
    std::int64_t active_mj = 0;  // its part of the energy above idle
    std::int64_t idle_mj = 0;    // its part of the idle energy (IdlePolicy::ByAllocation only)
    std::uint64_t weight = 0;    // Σ SM utilization samples (utilization), 1 otherwise
    Method method = Method::EqualSplit;

    [[nodiscard]] std::int64_t energy_mj() const { return active_mj + idle_mj; }
};

struct Remainder {
    std::int64_t idle_mj = 0;        // the idle estimate nobody was charged with
    std::int64_t no_process_mj = 0;  // energy above idle while no process was seen
    [[nodiscard]] std::int64_t energy_mj() const { return idle_mj + no_process_mj; }
};

struct IntervalAttribution {
    std::size_t gpu = 0;
    std::int64_t delta_mj = 0;  // the counter's ΔE: Σ shares + remainder, exactly
    double seconds = 0;
    std::vector<Share> shares;  // one per process, by ascending pid
    Remainder remainder;
    // Why the source could not say (the processes, or their utilization), for
    // the caller's error count; shares then fall back as Method says. A
    // NotSupported is reported once per GPU, and that call is not made again.
    std::vector<Error> errors;

    [[nodiscard]] std::int64_t attributed_mj() const;
};

// Splits `amount` (>= 0) in proportion to `weights` so that the parts add up
// to `amount` exactly: each part is the floor of its exact value, and the
// millijoules left go one each to the largest fractional parts (ties: lower
// index). All weights 0: equal parts. Empty weights: an empty result.
[[nodiscard]] std::vector<std::int64_t> split_exactly(std::int64_t amount, const std::vector<std::uint64_t>& weights);

// The pure core of one interval: ΔE, the idle estimate for it, the processes
// seen and their accumulated utilization (pid -> Σ sm_util, empty when unavailable).
struct IntervalInputs {
    std::int64_t delta_mj = 0;
    std::int64_t idle_estimate_mj = 0;  // clamped to [0, delta_mj]
    std::vector<std::uint32_t> pids;    // running or sampled, any order, duplicates allowed
    std::vector<ProcessUtilizationSample> samples;
    IdlePolicy idle_policy = IdlePolicy::Unattributed;
};
[[nodiscard]] IntervalAttribution attribute_interval(const IntervalInputs& inputs);

struct AttributorOptions {
    IdlePolicy idle_policy = IdlePolicy::Unattributed;
    // Per GPU index; a missing or nullopt entry: learned (see idle_power()).
    std::vector<std::optional<Milliwatts>> idle_power;
    // Intervals shorter than this never teach the idle power: the counter
    // refreshes every ~100 ms, so a short interval's average power is noise.
    std::chrono::milliseconds min_learning_interval{500};
};

// Keeps, per GPU, the previous counter reading, its time and the driver's
// last-seen utilization timestamp, so that each call attributes exactly the
// energy and the samples since the previous one. Not thread-safe: one pass at
// a time (the exporter's sampler thread).
class Attributor {
  public:
    using Clock = std::chrono::steady_clock;
    Attributor(ProcessSource& source, AttributorOptions options);

    // The interval since the previous call for `gpu`. The first call for a GPU
    // (or the first after a counter that went backwards) only sets the
    // baseline and returns an empty interval (delta 0).
    [[nodiscard]] IntervalAttribution step(std::size_t gpu, Millijoules counter, Clock::time_point now);

    // The idle power in use for `gpu`: configured, learned, or nullopt (not
    // learned yet: the whole ΔE counts as active until then).
    [[nodiscard]] std::optional<Milliwatts> idle_power(std::size_t gpu) const;

  private:
    struct GpuState {
        bool has_baseline = false;
        std::int64_t counter_mj = 0;
        Clock::time_point at{};
        std::uint64_t last_seen_us = 0;
        std::optional<double> learned_idle_mw;
        // The source said NotSupported (or FunctionNotFound) once: not asked
        // again, and not reported again (an old driver, MIG, a backend
        // without process data).
        bool no_running_processes = false;
        bool no_utilization = false;
    };
    GpuState& state(std::size_t gpu);
    [[nodiscard]] std::optional<double> idle_mw(std::size_t gpu) const;

    ProcessSource& source_;
    AttributorOptions options_;
    std::vector<GpuState> gpus_;
};

}  // namespace zeus::attribution
