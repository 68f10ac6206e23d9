#include "monitor/host_edges.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace zeus::monitor_detail {
namespace {

// A reading older than this at an edge means the watcher stalled (it reads
// every few milliseconds): said in a warning, as for GPUs.
constexpr std::chrono::seconds kStaleReading{1};

using PackageSample = EdgeSampler::PackageSample;

Seconds age_at(Timestamp edge, Timestamp read_at) { return std::max(Seconds(edge - read_at), Seconds(0.0)); }

// One counter of a package (the package's own or its DRAM's) at an edge.
Extrapolated package_edge(const PackageSample& sample, bool package, Watts ceiling, Timestamp edge) {
    const Joules at_read = package ? sample.energy->package : sample.energy->dram.value_or(Joules(0.0));
    return extrapolate(at_read, package ? sample.package_power : sample.dram_power, ceiling,
                       age_at(edge, sample.read_at));
}

std::string lost_reason(const PackageSample& sample) {
    return sample.error.empty() ? std::string("not read yet") : sample.error;
}

// Counter trouble between the two readings, as at synchronous edges.
bool counter_troubled(const CounterStats& before, const CounterStats& after) {
    return after.resets != before.resets || after.backward_glitches != before.backward_glitches ||
           after.jump_glitches != before.jump_glitches || after.late_reads != before.late_reads;
}

EnergyValue package_value(const HostWindow& w, std::size_t k, bool package) {
    const unsigned cpu = w.packages->indices[k];
    const PackageSample& begin = w.begin_frame->cpus[k];
    const PackageSample& end = w.end_frame->cpus[k];
    const std::string what = package ? "CPU package" : "the DRAM of CPU package";
    for (const auto& [sample, edge] : {std::pair{&begin, "beginning"}, std::pair{&end, "end"}}) {
        if (sample->energy && sample->error.empty()) continue;
        return EnergyValue{Joules(0.0),
                           EnergySource::HardwareCounter,
                           {fmt::format("{} {} could not be read at the {} of the window, its energy is unknown: {}",
                                        what, cpu, edge, lost_reason(*sample))},
                           true};
    }
    const Watts ceiling = package ? w.packages->ceilings[k].package : w.packages->ceilings[k].dram;
    const Extrapolated from = package_edge(begin, package, ceiling, w.start);
    const Extrapolated to = package_edge(end, package, ceiling, w.end);
    EnergyValue value{std::max(to.energy - from.energy, Joules(0.0)), EnergySource::HardwareCounter, {}};
    if (const Joules bound = from.error_bound + to.error_bound; bound > Joules(0.0)) value.edge_error_bound = bound;
    const auto& stats_before =
        package ? begin.energy->package_stats : begin.energy->dram_stats.value_or(CounterStats{});
    const auto& stats_after = package ? end.energy->package_stats : end.energy->dram_stats.value_or(CounterStats{});
    if (counter_troubled(stats_before, stats_after)) {
        value.warnings.push_back("the RAPL counter reset, glitched or was read late during the window");
    }
    const Seconds age = std::max(age_at(w.start, begin.read_at), age_at(w.end, end.read_at));
    if (age > kStaleReading) {
        value.warnings.push_back(fmt::format(
            "{} {}'s latest reading was {:.1f} s old at a window edge (normally a few milliseconds): that edge is "
            "extrapolated with the power then, off by at most {:.3f} J for the whole window",
            what, cpu, age.count(), value.edge_error_bound.value_or(Joules(0.0)).count()));
    }
    return value;
}

// A SoC metric at an edge: its energy at the reading plus the power then held
// to the edge (what the SoC's own integration does between its readings).
std::optional<Joules> soc_metric_at(const EdgeSampler::SocSample& sample, SocMetric metric, Timestamp edge) {
    if (!sample.energy) return std::nullopt;
    for (std::size_t m = 0; m < sample.energy->metrics.size(); ++m) {
        const auto& entry = sample.energy->metrics[m];
        if (entry.metric != metric || !entry.energy) continue;
        const Watts power = m < sample.power.size() ? sample.power[m].value_or(Watts(0.0)) : Watts(0.0);
        return *entry.energy + power * age_at(edge, sample.read_at);
    }
    return std::nullopt;
}

}  // namespace

Extrapolated extrapolate(Joules at_read, std::optional<Watts> power, Watts ceiling, Seconds age) {
    const Watts p = std::max(power.value_or(Watts(0.0)), Watts(0.0));
    return Extrapolated{at_read + p * age, std::max(p, ceiling - p) * age};
}

std::map<unsigned, EnergyValue> sampled_package_values(const HostWindow& w, bool package) {
    std::map<unsigned, EnergyValue> values;
    for (std::size_t k = 0; k < w.packages->indices.size(); ++k) {
        if (!package && !w.packages->has_dram[k]) continue;
        values.emplace_hint(values.end(), w.packages->indices[k], package_value(w, k, package));
    }
    return values;
}

std::map<std::string, EnergyValue> sampled_soc_values(const HostWindow& w) {
    std::map<std::string, EnergyValue> values;
    if (!w.begin_frame->soc || !w.end_frame->soc) return values;
    for (SocMetric metric : kSocMetrics) {
        const auto from = soc_metric_at(*w.begin_frame->soc, metric, w.start);
        const auto to = soc_metric_at(*w.end_frame->soc, metric, w.end);
        if (!from || !to) continue;
        values[std::string(to_string(metric))] =
            EnergyValue{std::max(*to - *from, Joules(0.0)), EnergySource::IntegratedPower, {}};
    }
    return values;
}

}  // namespace zeus::monitor_detail
