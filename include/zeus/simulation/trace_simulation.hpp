// `zeus power-limit simulate`: the power-limit optimizer run for real on a
// private simulated GPU whose work follows a measured power trace (time per
// epoch and average power versus power limit, data/power-traces), on the
// simulator's virtual clock, so a whole profile takes a fraction of a second.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "zeus/simulation/simulator_api.hpp"
#include "zeus/optimizer/power_limit_optimizer.hpp"
#include "zeus/optimizer/power_limit_report.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::simulation {

struct TraceWorkload {
    std::string dataset;
    std::string network;
    int batch_size = 0;
    std::string optimizer;
    std::vector<double> limits_w;  // the traced power limits, ascending

    // "cifar100/shufflenetv2 batch 1024 adadelta"
    [[nodiscard]] std::string name() const;
};

// The workloads of a trace CSV (columns dataset,network,batch_size,optimizer,
// power_limit,time_per_epoch,average_power), in file order. Errors name the
// file, the line and the column.
[[nodiscard]] Result<std::vector<TraceWorkload>> read_trace_workloads(const std::string& csv_path);

// The preset named by `gpu_model` (key or NVML name, case-insensitive) or,
// when it is empty, the one the trace was measured on, from its file name
// (summary_power_<gpu>.csv: a40, v100, p100, rtx6000, t4, ... in any case).
// Errors list the names that are known.
[[nodiscard]] Result<SimulatorPreset> choose_preset(const std::vector<SimulatorPreset>& presets,
                                                  const std::string& gpu_model, const std::string& csv_path);

// `workload` restricted to the limits `preset` accepts. `note` is empty when
// every traced limit fits; otherwise it names the trace's range, the
// preset's and the presets that fit the whole trace. An error (with the
// same names) when fewer than two limits fit.
struct FittedWorkload {
    TraceWorkload workload;
    std::string note;
};
[[nodiscard]] Result<FittedWorkload> fit_to_preset(const TraceWorkload& workload, const SimulatorPreset& preset,
                                                   const std::vector<SimulatorPreset>& presets);

struct TraceSimulationPlan {
    std::string csv_path;
    std::string gpu_model;  // simulator preset, e.g. "A40"
    unsigned gpu_count = 1;
    // pl_step 0: every traced limit is a candidate (however unevenly spaced).
    optimizer::PowerLimitOptimizerOptions optimizer;
    std::size_t steps_per_epoch = 100;
    std::vector<optimizer::SelectorPtr> report_selectors;
};

// Runs the optimizer over `workload` until it is done; returns its report.
// The simulator is private to the call (its own configuration and state in
// a temporary directory); ZEUS_SIM_CONFIG and ZEUS_SIM_STATE are overridden
// for this process.
[[nodiscard]] Result<optimizer::PowerLimitReport> simulate_trace(const TraceSimulationPlan& plan,
                                                                 const TraceWorkload& workload);

}  // namespace zeus::simulation
