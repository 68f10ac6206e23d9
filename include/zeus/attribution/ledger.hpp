// Running totals per workload and per GPU, from the engine's intervals: what
// an exporter publishes as never-decreasing counters. Each process of an
// interval is resolved to its workload (container, pod, Slurm job, user; see
// workload.hpp), and every millijoule of the GPU's counter lands in exactly
// one place, a workload or a remainder reason, so that
//   Σ workloads(gpu) + Σ remainder(gpu) == the GPU's counter
// holds after every add(), exactly (integer millijoules).
//
// Bounded cardinality: a workload that gained nothing for `expiry` is dropped
// and its energy moves to the "expired" remainder, so the identity still holds.
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/attribution/engine.hpp"
#include "zeus/attribution/pods.hpp"
#include "zeus/attribution/workload.hpp"

namespace zeus::attribution {

enum class RemainderReason {
    BeforeStart,  // the counter's energy before attribution began (and across counter restarts)
    Idle,         // the idle estimate nobody was charged with (IdlePolicy::Unattributed)
    NoProcess,    // energy above idle while no process was on the GPU
    Unresolved,   // a process whose workload could not be read (it ended, /proc not visible...)
    Expired,      // workloads that ended and were dropped after the expiry
    Count,
};
[[nodiscard]] std::string_view to_string(RemainderReason reason);

// One series: the GPU, the workload's labels (empty: not known) and how its
// energy was obtained.
struct WorkloadKey {
    std::size_t gpu = 0;
    std::string kind;  // container, pod, slurm_job, user or process
    std::string pod_uid;
    std::string container_id;
    std::string slurm_job;
    std::string user;
    std::string pid;  // only for kind "process" (nothing else is known of it)
    // Only for a GPU's holder (Method::Allocation), known by the kubelet's names;
    // other workloads are named by PodNamer when their series are written.
    std::string pod_namespace;
    std::string pod_name;
    std::string container_name;
    Method method = Method::EqualSplit;

    auto operator<=>(const WorkloadKey&) const = default;
};

// The key of a resolved process's workload: the most specific level known.
[[nodiscard]] WorkloadKey workload_key(std::size_t gpu, const Workload& workload, Method method);
// The key of a GPU's holder: kind "pod", its names and (when known) UID, Method::Allocation.
[[nodiscard]] WorkloadKey holder_key(std::size_t gpu, const GpuHolder& holder);

struct WorkloadTotal {
    std::int64_t energy_mj = 0;
    std::chrono::steady_clock::time_point last_increase{};
};

class WorkloadLedger {
  public:
    using Clock = std::chrono::steady_clock;
    WorkloadLedger(const WorkloadResolver& resolver, std::chrono::nanoseconds expiry);

    // Adds one interval of `interval.gpu` (one per GPU per pass), whose counter now reads counter_mj
    // (what the exporter shows for the GPU). Anything the interval does not
    // cover (the first call, a counter that restarted) goes to BeforeStart.
    // With a holder (IdlePolicy::ByAllocation, a GPU allocated whole to one
    // container), the interval's idle and no-process energy is the holder's
    // (Method::Allocation) instead of the remainder's.
    // Returns the errors met (unresolved processes, the engine's), for counting.
    std::vector<Error> add(const IntervalAttribution& interval, std::int64_t counter_mj, Clock::time_point now,
                           const GpuHolder* holder = nullptr);

    // Ends a pass over the GPUs: drops workloads idle for longer than the
    // expiry (into Expired) and forgets the cached workloads of processes not
    // seen in this pass (their PIDs may be reused).
    void end_pass(Clock::time_point now);

    [[nodiscard]] const std::map<WorkloadKey, WorkloadTotal>& workloads() const { return workloads_; }
    // The pods (cgroup pod UID, container id) whose processes got a share in
    // this pass, by GPU: what PodNamer matches against the kubelet's
    // allocations. Emptied by end_pass().
    [[nodiscard]] const std::set<PodSighting>& pods_seen() const { return pods_seen_; }
    [[nodiscard]] std::int64_t remainder_mj(std::size_t gpu, RemainderReason reason) const;
    // Σ workloads + Σ remainders of `gpu`: equals the last counter_mj given.
    [[nodiscard]] std::int64_t accounted_mj(std::size_t gpu) const;

  private:
    using Remainders = std::array<std::int64_t, static_cast<std::size_t>(RemainderReason::Count)>;
    Remainders& remainders(std::size_t gpu);
    void credit(const WorkloadKey& key, std::int64_t energy_mj, Clock::time_point now);
    const Result<Workload>& resolve(std::uint32_t pid, std::uint64_t pass);

    const WorkloadResolver& resolver_;
    std::chrono::nanoseconds expiry_;
    std::map<WorkloadKey, WorkloadTotal> workloads_;
    std::vector<Remainders> remainders_;
    struct Cached {
        Result<Workload> workload;
        std::uint64_t pass = 0;
    };
    // pid -> its workload, kept while the pid is seen in every pass, so /proc
    // is read once per process, not once per pass.
    std::map<std::uint32_t, Cached> cache_;
    std::uint64_t pass_ = 0;
    std::set<PodSighting> pods_seen_;
};

}  // namespace zeus::attribution
