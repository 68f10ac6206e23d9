// Workload profiles measured on real GPUs (data/power-traces/summary_power_*.csv):
// for one dataset/network/batch size, the time per epoch and the average power
// at each power limit. While a trace load runs, the simulated GPU draws the
// interpolated power and makes progress at 1/time_per_epoch epochs per second,
// so an optimizer sees the real time/energy trade-off of that workload.
#pragma once

#include <string>
#include <vector>

#include "shared_state.h"

namespace zeus::sim {

struct TraceRows {
  std::string key;  // identifies the rows, e.g. "summary_power_a40.csv:cifar100/shufflenetv2:1024:adadelta"
  std::vector<double> power_limit_w;
  std::vector<double> time_per_epoch_s;
  std::vector<double> average_power_w;
};

// Reads the rows of `workload` ("dataset/network") and batch size from a trace
// CSV. `optimizer` may be empty when only one optimizer appears for those rows.
// Throws SimError (kNotFound, kInvalidArgument) naming what is missing.
TraceRows read_trace_csv(const std::string& path, const std::string& workload, int batch_size,
                         const std::string& optimizer);

// Validates and sorts the rows, then stores them in the state (or finds an
// identical stored profile). Returns the profile index. Throws SimError.
int store_trace_profile(SharedState& state, TraceRows rows);

// Piecewise-linear interpolation of ys over the profile's power limits,
// clamped to the first/last point outside the measured range.
double interpolate_profile(const TraceProfile& profile, const double* ys, double power_limit_w);

}  // namespace zeus::sim
