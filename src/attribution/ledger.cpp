#include "zeus/attribution/ledger.hpp"

#include <numeric>

namespace zeus::attribution {

std::string_view to_string(RemainderReason reason) {
    switch (reason) {
        case RemainderReason::BeforeStart:
            return "before_start";
        case RemainderReason::Idle:
            return "idle";
        case RemainderReason::NoProcess:
            return "no_process";
        case RemainderReason::Unresolved:
            return "unresolved";
        case RemainderReason::Expired:
            return "expired";
        case RemainderReason::Count:
            break;
    }
    return "unknown";
}

WorkloadKey workload_key(std::size_t gpu, const Workload& workload, Method method) {
    WorkloadKey key;
    key.gpu = gpu;
    key.method = method;
    key.pod_uid = workload.pod_uid;
    key.container_id = workload.container_id;
    key.slurm_job = workload.slurm_job;
    key.user = workload.user;
    if (!workload.container_id.empty()) {
        key.kind = "container";
    } else if (!workload.pod_uid.empty()) {
        key.kind = "pod";
    } else if (!workload.slurm_job.empty()) {
        key.kind = "slurm_job";
    } else if (!workload.user.empty()) {
        key.kind = "user";
    } else {
        key.kind = "process";
        key.pid = std::to_string(workload.pid);
    }
    return key;
}

WorkloadKey holder_key(std::size_t gpu, const GpuHolder& holder) {
    WorkloadKey key;
    key.gpu = gpu;
    key.kind = "pod";
    key.pod_uid = holder.pod_uid;
    key.pod_namespace = holder.pod.pod_namespace;
    key.pod_name = holder.pod.name;
    key.container_name = holder.container_name;
    key.method = Method::Allocation;
    return key;
}

WorkloadLedger::WorkloadLedger(const WorkloadResolver& resolver, std::chrono::nanoseconds expiry)
    : resolver_(resolver), expiry_(expiry) {}

WorkloadLedger::Remainders& WorkloadLedger::remainders(std::size_t gpu) {
    if (remainders_.size() <= gpu) remainders_.resize(gpu + 1, Remainders{});
    return remainders_[gpu];
}

std::int64_t WorkloadLedger::remainder_mj(std::size_t gpu, RemainderReason reason) const {
    return gpu < remainders_.size() ? remainders_[gpu][static_cast<std::size_t>(reason)] : 0;
}

std::int64_t WorkloadLedger::accounted_mj(std::size_t gpu) const {
    std::int64_t sum = 0;
    if (gpu < remainders_.size())
        sum = std::accumulate(remainders_[gpu].begin(), remainders_[gpu].end(), std::int64_t{0});
    for (const auto& [key, total] : workloads_) {
        if (key.gpu == gpu) sum += total.energy_mj;
    }
    return sum;
}

const Result<Workload>& WorkloadLedger::resolve(std::uint32_t pid, std::uint64_t pass) {
    auto it = cache_.find(pid);
    // Kept only while seen in every pass, and never an error: a process that
    // could not be read is tried again next time.
    if (it != cache_.end() && it->second.workload.ok()) {
        it->second.pass = pass;
        return it->second.workload;
    }
    if (it != cache_.end()) cache_.erase(it);
    return cache_.emplace(pid, Cached{resolver_.resolve(pid), pass}).first->second.workload;
}

void WorkloadLedger::credit(const WorkloadKey& key, std::int64_t energy_mj, Clock::time_point now) {
    WorkloadTotal& total = workloads_[key];
    total.energy_mj += energy_mj;
    if (energy_mj > 0 || total.last_increase == Clock::time_point{}) total.last_increase = now;
}

std::vector<Error> WorkloadLedger::add(const IntervalAttribution& interval, std::int64_t counter_mj,
                                       Clock::time_point now, const GpuHolder* holder) {
    std::vector<Error> errors = interval.errors;
    Remainders& rest = remainders(interval.gpu);
    if (holder != nullptr) {
        // Only energy makes a holder's series: while its processes run, they have it all.
        if (interval.remainder.energy_mj() > 0) {
            credit(holder_key(interval.gpu, *holder), interval.remainder.energy_mj(), now);
        }
    } else {
        rest[static_cast<std::size_t>(RemainderReason::Idle)] += interval.remainder.idle_mj;
        rest[static_cast<std::size_t>(RemainderReason::NoProcess)] += interval.remainder.no_process_mj;
    }
    for (const Share& share : interval.shares) {
        const Result<Workload>& workload = resolve(share.pid, pass_);
        if (!workload) {
            rest[static_cast<std::size_t>(RemainderReason::Unresolved)] += share.energy_mj();
            errors.push_back(workload.error());
            continue;
        }
        if (!workload->pod_uid.empty()) {
            pods_seen_.insert(PodSighting{interval.gpu, workload->pod_uid, workload->container_id});
        }
        credit(workload_key(interval.gpu, *workload, share.method), share.energy_mj(), now);
    }
    // Whatever the interval did not cover: the counter before the first
    // interval, or a jump the engine took as a new baseline.
    const std::int64_t uncovered = counter_mj - accounted_mj(interval.gpu);
    if (uncovered > 0) rest[static_cast<std::size_t>(RemainderReason::BeforeStart)] += uncovered;
    return errors;
}

void WorkloadLedger::end_pass(Clock::time_point now) {
    std::erase_if(cache_, [&](const auto& entry) { return entry.second.pass != pass_; });
    pods_seen_.clear();
    ++pass_;
    for (auto it = workloads_.begin(); it != workloads_.end();) {
        if (now - it->second.last_increase > expiry_) {
            remainders(it->first.gpu)[static_cast<std::size_t>(RemainderReason::Expired)] += it->second.energy_mj;
            it = workloads_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace zeus::attribution
