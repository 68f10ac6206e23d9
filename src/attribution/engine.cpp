#include "zeus/attribution/engine.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "zeus/device/gpus.hpp"

namespace zeus::attribution {

std::string_view to_string(Method method) {
    switch (method) {
        case Method::Exclusive:
            return "exclusive";
        case Method::Utilization:
            return "utilization";
        case Method::EqualSplit:
            return "equal_split";
        case Method::Allocation:
            return "allocation";
    }
    return "unknown";
}

std::string_view to_string(IdlePolicy policy) {
    return policy == IdlePolicy::ByAllocation ? "allocation" : "unattributed";
}

Result<IdlePolicy> parse_idle_policy(std::string_view text) {
    if (text == "unattributed") return IdlePolicy::Unattributed;
    if (text == "allocation") return IdlePolicy::ByAllocation;
    return Error{ErrorCode::InvalidConfig, "unknown idle policy '" + std::string(text) + "'",
                 "use 'unattributed' (idle energy stays in the remainder, the default) or 'allocation' "
                 "(the processes on the GPU share it; for GPUs allocated to one workload at a time)"};
}

std::int64_t IntervalAttribution::attributed_mj() const {
    std::int64_t sum = 0;
    for (const Share& share : shares) sum += share.energy_mj();
    return sum;
}

std::vector<std::int64_t> split_exactly(std::int64_t amount, const std::vector<std::uint64_t>& weights) {
    std::vector<std::int64_t> parts(weights.size(), 0);
    if (weights.empty() || amount <= 0) return parts;
    // Exact integer arithmetic: part_i = amount * w_i / W with the remainder
    // of each division kept for the largest-remainder step (128-bit: amount
    // and W may each use most of 64 bits).
    __extension__ typedef unsigned __int128 Wide;
    Wide total = 0;
    for (std::uint64_t weight : weights) total += weight;
    const bool equal = total == 0;
    if (equal) total = weights.size();
    std::vector<Wide> fractions(weights.size());
    std::int64_t given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const Wide numerator = static_cast<Wide>(amount) * (equal ? 1 : weights[i]);
        parts[i] = static_cast<std::int64_t>(numerator / total);
        fractions[i] = numerator % total;
        given += parts[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    // amount - given < number of parts, since each floor lost less than 1.
    for (std::size_t k = 0; given < amount; ++k, ++given) ++parts[order[k]];
    return parts;
}

namespace {

bool permanently_unsupported(const Error& error) {
    return error.code == ErrorCode::NotSupported || error.code == ErrorCode::FunctionNotFound;
}

Method interval_method(std::size_t processes, std::uint64_t total_weight) {
    if (processes == 1) return Method::Exclusive;
    return total_weight > 0 ? Method::Utilization : Method::EqualSplit;
}

}  // namespace

IntervalAttribution attribute_interval(const IntervalInputs& in) {
    IntervalAttribution out;
    out.delta_mj = std::max<std::int64_t>(0, in.delta_mj);
    const std::int64_t idle = std::clamp<std::int64_t>(in.idle_estimate_mj, 0, out.delta_mj);
    const std::int64_t active = out.delta_mj - idle;

    // pid -> Σ sm_util; every process seen gets an entry, even with no sample.
    std::map<std::uint32_t, std::uint64_t> weights;
    for (std::uint32_t pid : in.pids) weights.emplace(pid, 0);
    for (const ProcessUtilizationSample& sample : in.samples) {
        if (sample.sm_util > 0) weights[sample.pid] += sample.sm_util;
    }
    if (weights.empty()) {
        out.remainder = {idle, active};
        return out;
    }
    std::vector<std::uint64_t> weight_list;
    std::uint64_t total = 0;
    for (const auto& [pid, weight] : weights) {
        weight_list.push_back(weight);
        total += weight;
    }
    const Method method = interval_method(weights.size(), total);
    const std::vector<std::int64_t> active_parts = split_exactly(active, weight_list);
    std::vector<std::int64_t> idle_parts(weights.size(), 0);
    if (in.idle_policy == IdlePolicy::ByAllocation) {
        idle_parts = split_exactly(idle, std::vector<std::uint64_t>(weights.size(), 1));
    } else {
        out.remainder.idle_mj = idle;
    }
    std::size_t i = 0;
    for (const auto& [pid, weight] : weights) {
        out.shares.push_back(
            Share{pid, active_parts[i], idle_parts[i], method == Method::Utilization ? weight : 1, method});
        ++i;
    }
    return out;
}

Result<std::vector<GpuProcess>> GpusProcessSource::running_processes(std::size_t gpu) {
    auto device = gpus_.at(gpu);
    if (!device) return device.error();
    return running_compute_processes(**device);
}

Result<ProcessUtilizationSamples> GpusProcessSource::process_utilization(std::size_t gpu, std::uint64_t last_seen_us) {
    auto device = gpus_.at(gpu);
    if (!device) return device.error();
    return zeus::process_utilization(**device, last_seen_us);
}

Attributor::Attributor(ProcessSource& source, AttributorOptions options)
    : source_(source), options_(std::move(options)) {}

Attributor::GpuState& Attributor::state(std::size_t gpu) {
    if (gpus_.size() <= gpu) gpus_.resize(gpu + 1);
    return gpus_[gpu];
}

std::optional<double> Attributor::idle_mw(std::size_t gpu) const {
    if (gpu < options_.idle_power.size() && options_.idle_power[gpu]) {
        return static_cast<double>(options_.idle_power[gpu]->count());
    }
    if (gpu < gpus_.size()) return gpus_[gpu].learned_idle_mw;
    return std::nullopt;
}

std::optional<Milliwatts> Attributor::idle_power(std::size_t gpu) const {
    const auto mw = idle_mw(gpu);
    if (!mw) return std::nullopt;
    return Milliwatts(static_cast<std::int64_t>(std::llround(*mw)));
}

IntervalAttribution Attributor::step(std::size_t gpu, Millijoules counter, Clock::time_point now) {
    GpuState& st = state(gpu);
    IntervalAttribution out;
    out.gpu = gpu;
    if (!st.has_baseline || counter.count() < st.counter_mj) {
        // Baseline: the samples the driver holds now belong to the past.
        auto utilization = source_.process_utilization(gpu, 0);
        if (utilization) st.last_seen_us = utilization->last_seen_us;
        st = GpuState{true, counter.count(), now, st.last_seen_us, st.learned_idle_mw};
        return out;
    }
    const double seconds = std::chrono::duration<double>(now - st.at).count();
    IntervalInputs in;
    in.delta_mj = counter.count() - st.counter_mj;
    in.idle_policy = options_.idle_policy;
    if (const auto mw = idle_mw(gpu)) in.idle_estimate_mj = std::llround(*mw * seconds);

    bool running_known = false;
    if (!st.no_running_processes) {
        auto running = source_.running_processes(gpu);
        running_known = running.ok();
        if (running) {
            for (const GpuProcess& process : *running) in.pids.push_back(process.pid);
        } else {
            out.errors.push_back(running.error());
            st.no_running_processes = permanently_unsupported(running.error());
        }
    }
    if (!st.no_utilization) {
        auto utilization = source_.process_utilization(gpu, st.last_seen_us);
        if (utilization) {
            in.samples = utilization->samples;
            st.last_seen_us = std::max(st.last_seen_us, utilization->last_seen_us);
        } else if (utilization.error().code != ErrorCode::NotFound) {
            // NVML's NOT_FOUND means "no sample newer than last seen": no error.
            out.errors.push_back(utilization.error());
            st.no_utilization = permanently_unsupported(utilization.error());
        }
    }

    // Learn the idle power from intervals nobody ran in (not when configured).
    const bool configured = gpu < options_.idle_power.size() && options_.idle_power[gpu].has_value();
    if (!configured && running_known && in.pids.empty() && in.samples.empty() &&
        now - st.at >= options_.min_learning_interval && seconds > 0) {
        const double average_mw = static_cast<double>(in.delta_mj) / seconds;
        if (!st.learned_idle_mw || average_mw < *st.learned_idle_mw) st.learned_idle_mw = average_mw;
    }

    IntervalAttribution split = attribute_interval(in);
    out.delta_mj = split.delta_mj;
    out.seconds = seconds;
    out.shares = std::move(split.shares);
    out.remainder = split.remainder;
    st.counter_mj = counter.count();
    st.at = now;
    return out;
}

}  // namespace zeus::attribution
