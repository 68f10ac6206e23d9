// EnergyMonitor's tests against the GPU simulator's ground-truth energy
// (energy_monitor_{accuracy,faults,edges}_test.cpp): a fresh simulator per
// test, opened through the real NVML backend, and the check that a value
// with an edge error bound holds the truth within it.
#pragma once

#include <gtest/gtest.h>

#include "support/sim_fixture.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::testing {

// A fresh simulator per test (its own config and state file).
class EnergyMonitorSim : public SimulatedGpus {
  protected:
    static Gpus open_gpus() { return Gpus::open(simulated()); }
    // The truth within the value's bound, give or take the counter's 1 mJ
    // resolution at each edge.
    static void expect_within_bound(const EnergyValue& v, const EdgeTruth& begin, const EdgeTruth& end, unsigned gpu) {
        const double bound = v.edge_error_bound.value_or(Joules(0.0)).count();
        EXPECT_GE(v.energy.count(), end.before[gpu] - begin.after[gpu] - bound - 0.002) << bound << " J";
        EXPECT_LE(v.energy.count(), end.after[gpu] - begin.before[gpu] + bound + 0.002) << bound << " J";
    }
};

}  // namespace zeus::testing
