#include "zeus/simulation/trace_simulation.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <filesystem>
#include <utility>

#include "zeus/bso/trace_replay.hpp"
#include "zeus/simulation/scratch_directory.hpp"
#include "zeus/simulation/simulator_api.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::simulation {
namespace {

constexpr std::string_view kHeader = "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power";

Error bad_trace(const std::string& path, std::size_t line, const std::string& what) {
    return Error{ErrorCode::InvalidConfig, fmt::format("power trace {} line {}: {}", path, line, what),
                 fmt::format("give a trace CSV with the columns {} (data/power-traces/)", kHeader), 0};
}

std::string simulator_config(const TraceSimulationPlan& plan, const TraceWorkload& workload) {
    const double min_w = workload.limits_w.front();
    const double max_w = workload.limits_w.back();
    return fmt::format(
        R"({{"clock": "virtual", "gpus": [{{"model": "{}", "count": {}, "power": {{"limit_min_w": {}, "limit_max_w": {}, "limit_default_w": {}}}}}]}})",
        plan.gpu_model, plan.gpu_count, min_w, max_w, max_w);
}

}  // namespace

std::string TraceWorkload::name() const {
    return fmt::format("{}/{} batch {} {}", dataset, network, batch_size, optimizer);
}

namespace {

// Lower case, letters and digits only: "Quadro RTX-6000" → "quadrortx6000".
std::string folded(std::string_view text) {
    std::string out;
    for (const unsigned char c : text) {
        if (std::isalnum(c) != 0) out.push_back(static_cast<char>(std::tolower(c)));
    }
    return out;
}

std::string range_text(double min_w, double max_w) { return fmt::format("{:g}–{:g} W", min_w, max_w); }

std::vector<std::string> presets_fitting(const std::vector<SimulatorPreset>& presets, double min_w, double max_w) {
    std::vector<std::string> fit;
    for (const auto& p : presets) {
        if (p.limit_min_w <= min_w && max_w <= p.limit_max_w) {
            fit.push_back(fmt::format("{} ({})", p.key, range_text(p.limit_min_w, p.limit_max_w)));
        }
    }
    return fit;
}

}  // namespace

Result<SimulatorPreset> choose_preset(const std::vector<SimulatorPreset>& presets, const std::string& gpu_model,
                                     const std::string& csv_path) {
    if (!gpu_model.empty()) {
        const std::string wanted = folded(gpu_model);
        for (const auto& p : presets) {
            if (wanted == folded(p.key) || wanted == folded(p.name)) return p;
        }
        std::vector<std::string> keys;
        for (const auto& p : presets) keys.push_back(p.key);
        return Error{ErrorCode::InvalidArgument, fmt::format("--gpu-model {}: no such simulator preset", gpu_model),
                     fmt::format("use one of {}", fmt::join(keys, ", ")), 0};
    }
    std::string stem = std::filesystem::path(csv_path).stem().string();
    std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char c) { return std::tolower(c); });
    if (stem.starts_with("summary_power_")) stem.erase(0, std::string_view("summary_power_").size());
    const std::string gpu = folded(stem);
    std::vector<std::string> known;
    for (const auto& p : presets) {
        for (const auto& n : p.trace_names) {
            if (gpu == n) return p;
            known.push_back(n);
        }
        if (!gpu.empty() && gpu == folded(p.key)) return p;
    }
    return Error{ErrorCode::InvalidArgument,
                 fmt::format("cannot tell from the file name {} which GPU the trace was measured on",
                             std::filesystem::path(csv_path).filename().string()),
                 fmt::format("name it summary_power_<gpu>.csv with <gpu> one of {}, or give --gpu-model",
                             fmt::join(known, ", ")),
                 0};
}

Result<FittedWorkload> fit_to_preset(const TraceWorkload& workload, const SimulatorPreset& preset,
                                     const std::vector<SimulatorPreset>& presets) {
    FittedWorkload fitted{workload, {}};
    auto& limits = fitted.workload.limits_w;
    limits.clear();
    for (const double w : workload.limits_w) {
        if (w >= preset.limit_min_w && w <= preset.limit_max_w) limits.push_back(w);
    }
    if (limits.size() == workload.limits_w.size()) return fitted;
    const double min_w = workload.limits_w.front(), max_w = workload.limits_w.back();
    const auto fit = presets_fitting(presets, min_w, max_w);
    const std::string what = fmt::format("{} was traced at {}, outside {}'s power-limit range {}", workload.name(),
                                         range_text(min_w, max_w), preset.key,
                                         range_text(preset.limit_min_w, preset.limit_max_w));
    const std::string which = fit.empty() ? std::string("no preset takes the whole range")
                                          : fmt::format("presets that take the whole range: {}", fmt::join(fit, ", "));
    if (limits.size() < 2) {
        return Error{ErrorCode::InvalidArgument, fmt::format("{}; fewer than two traced limits fit", what),
                     fmt::format("choose another --gpu-model; {}", which), 0};
    }
    fitted.note = fmt::format("{}; profiling only the {} traced limits inside it ({})", what, limits.size(), which);
    return fitted;
}

Result<std::vector<TraceWorkload>> read_trace_workloads(const std::string& csv_path) {
    auto trace = bso::PowerTrace::read(csv_path, "--trace");
    if (!trace) return trace.error();
    std::vector<TraceWorkload> workloads;
    for (const auto& w : trace->workloads()) {
        if (w.batch_size > std::numeric_limits<int>::max()) {
            return bad_trace(csv_path, 2, fmt::format("batch size {} is too large", w.batch_size));
        }
        TraceWorkload workload{w.dataset, w.network, static_cast<int>(w.batch_size), w.optimizer, {}};
        for (const auto& [limit_w, epoch] : trace->limits(w)) workload.limits_w.push_back(limit_w);  // ascending
        if (workload.limits_w.size() < 2) {
            return bad_trace(csv_path, 2, fmt::format("{} has fewer than two power limits", workload.name()));
        }
        workloads.push_back(std::move(workload));
    }
    return workloads;
}

Result<optimizer::PowerLimitReport> simulate_trace(const TraceSimulationPlan& plan, const TraceWorkload& workload) {
    auto scratch = ScratchDirectory::create("zeus-power-limit");
    if (!scratch) return scratch.error();
    auto opened = open_private_simulator(scratch->path(), simulator_config(plan, workload));
    if (!opened) return opened.error();
    const Gpus gpus = std::move(opened).value();
    auto api = SimulatorApi::open(gpus);
    if (!api) return api.error();

    int profile = -1;
    const std::string name = workload.dataset + "/" + workload.network;
    if (api->trace_profile_load(plan.csv_path.c_str(), name.c_str(), workload.batch_size, workload.optimizer.c_str(),
                          &profile) != 0) {
        return api->failure("loading " + workload.name());
    }
    // Data parallel: every other GPU runs the same work alongside GPU 0.
    for (std::size_t g = 1; g < gpus.size(); ++g) {
        int load = -1;
        if (api->trace_load_begin(gpus[g].identity().physical_index, profile, &load) != 0) {
            return api->failure("starting the load on GPU " + std::to_string(g));
        }
    }
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr);
    if (!monitor) return monitor.error();
    optimizer::PowerLimitOptimizerOptions o = plan.optimizer;
    if (o.pl_step.count() == 0) {
        // Every traced limit: traces are often unevenly spaced (260, 250, 225, ... W).
        for (const double w : workload.limits_w) o.power_limits.emplace_back(w);
        o.pl_step = Watts(1.0);  // unused with explicit limits, but must be valid
    }
    auto created = optimizer::GlobalPowerLimitOptimizer::create(gpus, **monitor, o);
    if (!created) return created.error();
    auto& optimizer = **created;
    const double epochs_per_step = 1.0 / static_cast<double>(plan.steps_per_epoch);
    const unsigned gpu0 = gpus[0].identity().physical_index;
    constexpr int kMaxEpochs = 10000;
    for (int epoch = 0; epoch < kMaxEpochs && !optimizer.done(); ++epoch) {
        if (auto s = optimizer.on_epoch_begin(); !s) return s.error();
        for (std::size_t step = 0; step < plan.steps_per_epoch && !optimizer.done(); ++step) {
            if (auto s = optimizer.on_step_begin(); !s) return s.error();
            double elapsed = 0;
            if (api->run_trace_work(gpu0, profile, epochs_per_step, &elapsed) != 0) return api->failure("running a step");
            if (auto s = optimizer.on_step_end(); !s) return s.error();
        }
        if (!optimizer.done()) {
            if (auto s = optimizer.on_epoch_end(); !s) return s.error();
        }
    }
    if (!optimizer.done()) {
        return Error{ErrorCode::Timeout, fmt::format("profiling did not finish in {} epochs", kMaxEpochs),
                     "lower --warmup-steps and --profile-steps", 0};
    }
    return optimizer.report(plan.report_selectors);
}

}  // namespace zeus::simulation
