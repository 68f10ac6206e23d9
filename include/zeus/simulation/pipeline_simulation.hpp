// `zeus perseus simulate`: Perseus end to end on simulated GPUs, one per
// pipeline stage. Each stage's forward and backward are simulator work whose
// time and energy follow the locked SM clock; they are profiled at each
// frequency, the frontier is solved, the chosen schedule is served by the PFO
// server and run by the client on every stage, and the measured iteration
// time and energy are compared with every stage at its maximum clock.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::simulation {

struct PipelineSimulationPlan {
    std::size_t stages = 4;
    std::size_t microbatches = 8;
    std::string gpu_model = "A100-SXM4-40GB";
    // Work units (1 unit = 1 s at full utilization and the maximum clock) of
    // the first stage's forward; stage s does (1 + imbalance*s/(S-1)) times
    // that; a backward is twice its forward.
    double forward_units = 0.02;
    double imbalance = 0.3;
    double utilization = 1.0;
    // Profiled clocks: every `frequency_stride`-th supported clock from the
    // maximum down to `min_frequency_fraction` of it.
    std::size_t frequency_stride = 3;
    double min_frequency_fraction = 0.5;
    double unit_time = 0.001;
    std::size_t iterations = 3;  // measured per run, after one warm-up iteration
};

struct MeasuredRun {
    double iteration_time_s = 0;    // mean over the measured iterations
    double iteration_energy_j = 0;  // all GPUs, ground truth
    std::size_t clock_changes = 0;  // per iteration, all stages
};

struct PipelineSimulationReport {
    PipelineSimulationPlan plan;
    std::vector<long long> frequencies;  // profiled, descending
    double p2p_power_w = 0;              // an idle (blocked) GPU's measured power
    std::size_t frontier_points = 0;
    std::size_t chosen_point = 0;  // the fastest point: no slowdown against all-max
    double predicted_time_s = 0, predicted_energy_j = 0;
    std::string job_id;
    std::vector<std::vector<std::pair<std::string, long long>>> schedule;  // per stage, as served
    MeasuredRun all_max, perseus;
    [[nodiscard]] std::string to_json() const;
    [[nodiscard]] std::string to_text() const;
};

// Sets ZEUS_SIM_CONFIG/ZEUS_SIM_STATE to a private scratch simulator.
[[nodiscard]] Result<PipelineSimulationReport> simulate_pipeline(const PipelineSimulationPlan& plan);

}  // namespace zeus::simulation
