#include "zeus/lowtime/perseus_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "zeus/platform/utf8.hpp"

namespace zeus::lowtime {

namespace {

std::string describe(const StageInstruction& key) {
    return "stage " + std::to_string(key.first) + (key.second == InstructionKind::kForward ? " forward" : " backward");
}

// No GPU draws this much: a profile above it has energies in the wrong unit
// (the original's profiler writes joules; mJ and uJ are the usual mistakes).
constexpr double kImplausiblePowerWatts = 1e5;

void check_energy_units(const StageInstruction& key, const std::vector<InstructionMeasurement>& measured) {
    for (const auto& m : measured) {
        const double watts = m.energy / m.time;
        if (watts > kImplausiblePowerWatts)
            throw std::invalid_argument(describe(key) + " at " + std::to_string(m.frequency) + " MHz: energy " +
                                        std::to_string(m.energy) + " over " + std::to_string(m.time) + " s is " +
                                        std::to_string(watts) +
                                        " W, beyond any GPU: the energy column must be in joules and time in "
                                        "seconds (divide millijoules by 1e3, microjoules by 1e6)");
    }
}

// One operation's durations span up to this many quanta; the solver keeps a
// cost per quantum of every operation and walks the frontier a quantum at a
// time, so this bounds its memory and run time (1000 s at the default 1 ms).
constexpr double kMaxQuanta = 1e6;

void check_quanta(const std::vector<InstructionMeasurement>& measured, double unit_time) {
    for (const auto& m : measured) {
        const double quanta = m.time / unit_time;
        if (quanta > kMaxQuanta)
            throw std::invalid_argument("profile line " + std::to_string(m.line) + ": time " + std::to_string(m.time) +
                                        " s is " + std::to_string(quanta) + " quanta of " + std::to_string(unit_time) +
                                        " s, more than the 1000000 the solver handles: the time column must be one "
                                        "microbatch's instruction in seconds (or pass a larger --unit-time)");
    }
}

void rate_fit(StageInstructionModel& model) {
    const auto& options = model.spec->options.options();
    double lo = options.front().cost, hi = lo;
    for (const auto& o : options) {
        lo = std::min(lo, o.cost);
        hi = std::max(hi, o.cost);
    }
    model.rms_error = std::sqrt(exponential_mse(model.spec->options, model.coefficients));
    // One option has no range to compare with (and the solver never varies it).
    model.poor_fit = options.size() > 1 && !(model.rms_error <= 0.1 * (hi - lo));
}

}  // namespace

std::vector<std::vector<std::pair<InstructionKind, Knob>>> PerseusPlan::schedule_at(std::size_t point) const {
    const auto knobs = frontier.knobs_at(pipeline.dag, point);
    std::vector<std::vector<std::pair<InstructionKind, Knob>>> schedule(stages);
    for (std::size_t s = 0; s < stages; ++s)
        for (std::size_t k = 0; k < pipeline.nodes[s].size(); ++k)
            schedule[s].emplace_back(pipeline.orders[s][k].kind, knobs[pipeline.nodes[s][k]]);
    return schedule;
}

std::string schedule_json(const PerseusPlan& plan, std::size_t point) {
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& stage : plan.schedule_at(point)) {
        auto& s = doc.emplace_back(nlohmann::json::array());
        for (const auto& [kind, knob] : stage)
            s.push_back({kind == InstructionKind::kForward ? "forward" : "backward", knob});
    }
    return json_text(doc) + "\n";
}

double PerseusPlan::energy_with_p2p(std::size_t point) const {
    const auto& p = frontier.points().at(point);
    return p.cost + static_cast<double>(stages) * p.real_time * options.p2p_power;
}

double estimated_solve_bytes(std::size_t stages, std::size_t microbatches, std::size_t quanta_per_operation) {
    constexpr double kBytesPerOperation = 1600.0;
    const double operations = 2.0 * static_cast<double>(stages) * static_cast<double>(microbatches);
    return operations * (kBytesPerOperation + 8.0 * static_cast<double>(quanta_per_operation));
}

PerseusPlan plan_pipeline_frequencies(const InstructionProfile& profile, PerseusOptions options) {
    if (options.microbatches == 0) throw std::invalid_argument("the number of microbatches must be at least 1");
    if (!(options.unit_time > 0.0)) throw std::invalid_argument("unit time must be positive");
    if (profile.stages == 0) throw std::invalid_argument("the profile has no stages");
    PerseusPlan plan;
    plan.stages = profile.stages;
    for (std::size_t s = 0; s < profile.stages; ++s) {
        for (auto kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
            const StageInstruction key{s, kind};
            const auto& measured = profile.of(s, kind);
            if (measured.empty()) throw std::invalid_argument(describe(key) + " has no measurements");
            check_energy_units(key, measured);
            check_quanta(measured, options.unit_time);
            std::vector<ExecutionOption> raw;
            for (const auto& m : measured) {
                ExecutionOption option{m.time, options.unit_time, m.energy, m.frequency};
                // Effective energy: what the instruction costs beyond blocking at P2P power.
                option.cost -= options.p2p_power * option.quant_time() * option.unit_time;
                raw.push_back(option);
            }
            CandidateExecutionOptions candidates(raw);
            if (candidates.options().size() <= 3) candidates = CandidateExecutionOptions(raw, options.noise_factor);
            StageInstructionModel model;
            if (const auto it = options.cost_model_overrides.find(key); it != options.cost_model_overrides.end()) {
                model.coefficients = it->second;
                model.overridden = true;
            } else if (raw.size() <= 3) {
                throw std::invalid_argument(describe(key) + ": " + std::to_string(raw.size()) +
                                            " frequencies profiled, too few to fit a*exp(b*t)+c (4 needed): profile "
                                            "at least 4 frequencies");
            } else if (candidates.options().size() <= 3) {
                throw std::invalid_argument(
                    describe(key) + ": only " + std::to_string(candidates.options().size()) + " of " +
                    std::to_string(raw.size()) +
                    " frequencies are Pareto-optimal in (time, effective energy), too few to fit a*exp(b*t)+c (4 needed); "
                    "energy must fall as the instruction slows down: profile more frequencies or check the "
                    "time/energy columns and --p2p-power");
            } else {
                try {
                    model.coefficients = fit_exponential_model(candidates).coefficients();
                } catch (const std::invalid_argument& e) {
                    throw std::invalid_argument(describe(key) + ": " + e.what());
                }
            }
            auto cost_model = std::make_shared<ExponentialModel>(model.coefficients);
            // The solver trades time for cost: a model whose cost rises as the
            // instruction slows down has nothing to trade.
            const int lo = candidates.min_quant_time(), hi = candidates.max_quant_time();
            if (hi > lo && cost_model->cost(hi) > cost_model->cost(lo))
                throw std::invalid_argument(describe(key) + ": energy rises as the instruction slows down (cost model " +
                                            std::to_string(cost_model->cost(lo)) + " J at " + std::to_string(lo) +
                                            " quanta, " + std::to_string(cost_model->cost(hi)) + " J at " +
                                            std::to_string(hi) + "); check the profile's time and energy columns");
            model.spec = std::make_shared<OperationSpec>(OperationSpec{std::move(candidates), std::move(cost_model)});
            rate_fit(model);
            plan.models.emplace(key, std::move(model));
        }
    }
    plan.options = options;
    if (options.memory_budget_bytes > 0) {
        std::size_t widest = 1;
        for (const auto& [key, model] : plan.models)
            widest = std::max<std::size_t>(
                widest, static_cast<std::size_t>(model.spec->options.max_quant_time() - model.spec->options.min_quant_time() + 1));
        const double needed = estimated_solve_bytes(profile.stages, options.microbatches, widest);
        if (needed > static_cast<double>(options.memory_budget_bytes))
            throw std::invalid_argument(
                std::to_string(profile.stages) + " stages x " + std::to_string(options.microbatches) +
                " microbatches would need about " + std::to_string(static_cast<long long>(needed / 1048576.0)) +
                " MiB to solve, more than the " + std::to_string(options.memory_budget_bytes / 1048576) +
                " MiB available: solve fewer microbatches (the schedule of one iteration repeats; a few times the "
                "stage count is typical) or free memory");
    }
    plan.pipeline = make_synchronous_1f1b_dag(profile.stages, options.microbatches,
                                              [&](std::size_t s, InstructionKind kind) { return plan.models.at({s, kind}).spec; });
    plan.frontier = solve_frontier(plan.pipeline.dag, options.solver);
    return plan;
}

}  // namespace zeus::lowtime
