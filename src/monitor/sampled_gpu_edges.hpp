// Sampled window edges of the GPUs with an energy counter: each edge is the
// edge sampler's frame (monitor/edge_sampler.hpp) taken then, and a window's
// GPU values are computed from its two frames alone when the result is first
// read, with no driver call, whichever thread reads it (docs/monitoring.md,
// "Window edges").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "monitor/counter_edges.hpp"
#include "monitor/edge_sampler.hpp"

namespace zeus::monitor_detail {

// Sampled edges: counter GPU `k`'s begin edge from the frame taken then, as
// a synchronous read would have given it.
CounterEdge sampled_begin(const CounterGpus& counters, std::size_t k, const EdgeSampler::Frame& frame, Timestamp start,
                          SystemClock::time_point start_wall);

// What a sampled window's result is computed from when its GPU values are
// first read: the frames and clocks of both edges, nothing of the monitor.
struct SampledEnd {
    std::shared_ptr<const CounterGpus> counters;
    std::shared_ptr<const EdgeSampler::Frame> begin_frame;
    std::shared_ptr<const EdgeSampler::Frame> end_frame;
    std::shared_ptr<const EdgeSampler::Frame> power_frame;  // approx_instant_energy: before synchronising
    Timestamp start;
    Timestamp end;
    SystemClock::time_point start_wall;
    SystemClock::time_point end_wall;
    Seconds time{0.0};
    std::map<unsigned, EnergyValue> others;  // GPUs without a counter, measured at the end edge
    bool approx_instant_energy = false;
    std::map<unsigned, Watts> instant;  // GPUs without a counter, read before synchronising
};

// Every GPU value of a sampled window, computed from its two frames alone:
// no driver call, whichever thread first reads the result.
std::map<unsigned, EnergyValue> sampled_gpu_values(const SampledEnd& w);

// What sampled_gpu_values(w) adds up to (its total, lost GPUs, zeros), in
// one pass without a per-GPU allocation: what end_window must warn about
// and total_energy reads, for any number of GPUs at the same cost.
EnergyTally<unsigned> sampled_gpu_tally(const SampledEnd& w);

}  // namespace zeus::monitor_detail
