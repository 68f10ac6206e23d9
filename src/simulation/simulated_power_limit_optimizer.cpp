#include "zeus/simulation/simulated_power_limit_optimizer.hpp"

#include <fmt/format.h>

#include "zeus/device/gpus.hpp"
#include "zeus/simulation/trace_simulation.hpp"

namespace zeus::simulation {

Result<SimulatedPowerLimitOptimizer> SimulatedPowerLimitOptimizer::open(const std::string& csv, double eta) {
    auto environment = GpuOptions::from_environment();
    if (!environment) return environment.error();
    auto library = locate_simulator_library(environment->simulator_library);
    if (!library) return library.error();
    auto presets = simulator_presets(*library);
    if (!presets) return presets.error();
    auto preset = choose_preset(*presets, "", csv);
    if (!preset) return preset.error();
    auto selector = optimizer::parse_selector(fmt::format("zeus-cost:eta={}", eta));
    if (!selector) return selector.error();
    return SimulatedPowerLimitOptimizer(csv, *preset, std::move(presets).value(), *selector);
}

Result<double> SimulatedPowerLimitOptimizer::choose(const bso::TraceJob& job, std::int64_t batch_size,
                                                    const bso::LimitTable& limits) const {
    TraceWorkload workload{job.dataset, job.network, static_cast<int>(batch_size), job.optimizer, {}};
    for (const auto& [w, epoch] : limits) workload.limits_w.push_back(w);
    auto fitted = fit_to_preset(workload, preset_, presets_);
    if (!fitted) return fitted.error();
    TraceSimulationPlan plan;
    plan.csv_path = csv_;
    plan.gpu_model = preset_.key;
    plan.optimizer.selector = selector_;
    plan.optimizer.wait_steps = 0;
    plan.optimizer.warmup_steps = kWarmupSteps;
    plan.optimizer.profile_steps = kProfileSteps;
    // One epoch holds every limit's warm-up and window, plus the step on
    // which the choice is set.
    plan.steps_per_epoch = fitted->workload.limits_w.size() * (kWarmupSteps + kProfileSteps) + 1;
    auto report = simulate_trace(plan, fitted->workload);
    if (!report) return report.error();
    for (const auto& c : report->choices)
        if (c.in_use) return static_cast<double>(c.power_limit.count()) / 1000.0;
    return Error{ErrorCode::Unknown, "the power-limit optimizer reported no choice", "report this bug", 0};
}

}  // namespace zeus::simulation
