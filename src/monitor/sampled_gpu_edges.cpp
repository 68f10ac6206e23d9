#include "monitor/sampled_gpu_edges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zeus::monitor_detail {
namespace {

// A watcher sample as the snapshot a read would have returned. Without a
// refresh time from the driver, the counter is at least as fresh as the
// read: its time stands in, so the bound still covers the time since. A
// counter that refused to be read while the watch integrated the power is
// stood in for as a stuck one (counter_or_stand_in, which updates `watched`).
Result<EnergySnapshot> sampled_snapshot(const EdgeSampler::GpuSample& sample, CounterWatch::GpuView& watched) {
    if (!sample.snapshot) {
        if (watched.refused)
            return counter_or_stand_in(Error{ErrorCode::NotSupported, *watched.refused, {}, 0}, watched);
        return Error{ErrorCode::Unavailable, sample.error.empty() ? "not read yet" : sample.error,
                     "check the GPU (nvidia-smi)", 0};
    }
    EnergySnapshot snapshot = *sample.snapshot;
    if (!snapshot.refreshed_at) snapshot.refreshed_at = sample.read_at;
    return snapshot;
}

// Sampled edges: the counter extrapolated from its refresh to `edge`
// (however long ago the watcher read it; the bound grows with the age).
EdgeEstimate sampled_energy(const EnergySnapshot& snapshot, const CounterWatch::GpuView& watched,
                            SystemClock::time_point edge, Watts ceiling) {
    if (watched.stuck_since) return EdgeEstimate{quantity_cast<Joules>(snapshot.energy)};
    return energy_at(snapshot, edge, ceiling, SystemClock::duration::max());
}

// A plain sample's edge (EdgeSampler::plain_of): what sampled_snapshot and
// sampled_energy give for it, the bound left out (a tally has none).
Joules plain_energy_at(const EdgeSampler::PlainGpu& sample, SystemClock::time_point edge) {
    Joules energy = sample.energy;
    if (sample.extrapolates) {
        // As energy_at extrapolates, to the bit: a tally equals its values.
        const auto age = edge - sample.refreshed_at;
        if (age > SystemClock::duration::zero() && age < SystemClock::duration::max()) energy += sample.power * age;
    }
    return energy;
}

// Why an edge read the GPU itself (its watched sample was late), or "".
std::string late_read_note(const EdgeSampler::GpuSample& sample, std::string_view edge) {
    if (!sample.read_at_edge_late_by) return {};
    return fmt::format(
        "the watcher was {:.0f} ms late to read it at the {} of the window (a stalled thread or a "
        "slow driver call), so that edge read the GPU itself",
        std::chrono::duration<double, std::milli>(*sample.read_at_edge_late_by).count(), edge);
}

// Each edge's note of a late watcher, as warnings of `value`.
void note_late_reads(EnergyValue& value, unsigned gpu, const EdgeSampler::GpuSample& begin,
                     const EdgeSampler::GpuSample& end) {
    for (const auto& [sample, edge] : {std::pair{&begin, "beginning"}, std::pair{&end, "end"}}) {
        const std::string note = late_read_note(*sample, edge);
        if (!note.empty()) value.warnings.push_back(fmt::format("GPU {}: {}", gpu, note));
    }
}

// A lost GPU's warning, with the edge's note when that edge read it itself.
std::string lost_warning(std::string text, const EdgeSampler::GpuSample& sample, std::string_view edge) {
    const std::string note = late_read_note(sample, edge);
    if (!note.empty()) text += " (" + note + ")";
    return text;
}

// One counter GPU of a sampled window before its notes: its energy and
// bound, or lost with why. No allocation for a GPU that answered (the
// tally computes this for every GPU at end_window). `begin`: its begin
// edge; `watched`: set to the watch's view at the end edge.
EnergyValue sampled_gpu_energy(const SampledEnd& w, std::size_t k, const CounterEdge& begin,
                               CounterWatch::GpuView& watched) {
    const unsigned i = w.counters->indices[k];
    const auto& end_sample = w.end_frame->gpus[k];
    watched = end_sample.watched;
    auto snapshot = sampled_snapshot(end_sample, watched);
    if (!snapshot) {
        return lost_value(
            EnergySource::HardwareCounter,
            lost_warning(fmt::format("GPU {} could not be read at the end of the window, its energy is unknown: {}", i,
                                     snapshot.error().describe()),
                         end_sample, "end"));
    }
    if (begin.lost) {
        return lost_value(EnergySource::HardwareCounter,
                          lost_warning(fmt::format("GPU {} could not be read at the beginning of the window, its "
                                                   "energy is unknown: {}",
                                                   i, *begin.lost),
                                       w.begin_frame->gpus[k], "beginning"));
    }
    watched = watched_at(std::move(watched), *snapshot, w.end);
    const EdgeEstimate at_end = sampled_energy(*snapshot, watched, w.end_wall, w.counters->ceilings[k]);
    return counter_difference(begin, at_end, watched);
}

// One counter GPU of a sampled window, with its warnings.
EnergyValue sampled_gpu_value(const SampledEnd& w, std::size_t k, const std::string& short_window) {
    const unsigned i = w.counters->indices[k];
    const CounterEdge begin = sampled_begin(*w.counters, k, *w.begin_frame, w.start, w.start_wall);
    CounterWatch::GpuView watched;
    EnergyValue value = sampled_gpu_energy(w, k, begin, watched);
    if (value.lost) return value;
    const auto& end_sample = w.end_frame->gpus[k];
    if (!short_window.empty()) value.warnings.push_back(short_window);
    note_late_reads(value, i, w.begin_frame->gpus[k], end_sample);
    note_counter_history(value, i, begin, watched, end_sample.stats, w.end);
    note_impossible_power(value, i, w.counters->ceilings[k], w.time);
    return value;
}

}  // namespace

CounterEdge sampled_begin(const CounterGpus& counters, std::size_t k, const EdgeSampler::Frame& frame, Timestamp start,
                          SystemClock::time_point start_wall) {
    const auto& sample = frame.gpus[k];
    CounterWatch::GpuView view = sample.watched;
    auto snapshot = sampled_snapshot(sample, view);
    if (!snapshot) return {Joules(0.0), Joules(0.0), sample.stats, sample.watched, snapshot.error().describe()};
    const auto watched = watched_at(std::move(view), *snapshot, start);
    const EdgeEstimate edge = sampled_energy(*snapshot, watched, start_wall, counters.ceilings[k]);
    return {edge.energy, edge.error_bound, sample.stats, watched, std::nullopt};
}

std::map<unsigned, EnergyValue> sampled_gpu_values(const SampledEnd& w) {
    std::string short_window;
    if (w.time < kCounterUpdatePeriod && !w.counters->indices.empty()) short_window = short_window_warning(w.time);
    std::map<unsigned, EnergyValue> values = w.others;
    // Instant powers matter only to approximate zeros.
    std::map<unsigned, Watts> instant;
    if (w.approx_instant_energy) instant = w.instant;
    for (std::size_t k = 0; k < w.counters->indices.size(); ++k) {
        const unsigned i = w.counters->indices[k];
        // Indices ascend: with no other GPU before, each goes at the end.
        values.insert_or_assign(values.end(), i, sampled_gpu_value(w, k, short_window));
        if (!w.power_frame || !w.approx_instant_energy) continue;
        const auto& sampled = w.power_frame->gpus[k].snapshot;
        if (sampled && sampled->power) instant[i] = quantity_cast<Watts>(*sampled->power);
    }
    mark_zeros(values, w.approx_instant_energy, instant, w.time);
    return values;
}

EnergyTally<unsigned> sampled_gpu_tally(const SampledEnd& w) {
    // GPUs without a counter interleave by index, and approximated zeros
    // need the values: rare, so those windows tally the values themselves.
    if (!w.others.empty() || w.approx_instant_energy) return EnergyTally<unsigned>::of(sampled_gpu_values(w));
    EnergyTally<unsigned> tally;
    CounterWatch::GpuView watched;
    const auto& begins = w.begin_frame->plain;
    const auto& ends = w.end_frame->plain;
    for (std::size_t k = 0; k < w.counters->indices.size(); ++k) {
        if (begins[k].plain && ends[k].plain) {
            // As counter_difference computes it, from the packed samples alone.
            tally.add_measured(counter_difference_energy(plain_energy_at(begins[k], w.start_wall),
                                                         plain_energy_at(ends[k], w.end_wall), begins[k].compensation,
                                                         ends[k].compensation));
            continue;
        }
        const CounterEdge begin = sampled_begin(*w.counters, k, *w.begin_frame, w.start, w.start_wall);
        // The warnings a value adds to sampled_gpu_energy's never change
        // its energy, whether it is lost or its first warning when lost.
        tally.add(w.counters->indices[k], sampled_gpu_energy(w, k, begin, watched));
    }
    return tally;
}

}  // namespace zeus::monitor_detail
