#include "zeus/bso/algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace zeus::bso {

double zeus_cost(double energy, double time, double eta_knob, double max_power) {
    return eta_knob * energy + (1 - eta_knob) * max_power * time;
}

ReportDecision decide_report(const JobSpec& job, std::optional<double> min_cost, const ReportedProgress& progress) {
    double cost_upper_bound = std::numeric_limits<double>::infinity();
    if (job.beta_knob && min_cost) cost_upper_bound = *job.beta_knob * *min_cost;
    ReportDecision decision;
    decision.cost = zeus_cost(progress.energy, progress.time, job.eta_knob, job.max_power);
    const bool within_cost_range = cost_upper_bound >= decision.cost;
    const bool reached = job.higher_is_better_metric ? job.target_metric <= progress.metric
                                                     : job.target_metric >= progress.metric;
    if (within_cost_range && progress.current_epoch < job.max_epochs && !reached) {
        decision.message = "Stop condition not met, keep training";
        return decision;
    }
    decision.stop_train = true;
    decision.converged = reached && within_cost_range;
    if (decision.converged) {
        decision.message = "Train succeeded";
    } else if (!within_cost_range) {
        decision.message = "Batch Size(" + std::to_string(progress.batch_size) + ") exceeded the cost upper bound: current cost(" +
                           std::to_string(decision.cost) + ") > beta_knob(" + std::to_string(job.beta_knob.value_or(0)) +
                           ")*min_cost(" + std::to_string(min_cost.value_or(0)) + ")";
    } else {
        decision.message = "Train failed to converge within max_epoch(" + std::to_string(job.max_epochs) + ")";
    }
    return decision;
}

namespace {
PruningStep explore(std::int64_t batch_size) {
    PruningStep step;
    step.batch_size = batch_size;
    return step;
}
PruningStep concurrent() {
    PruningStep step;
    step.kind = PruningStep::Kind::Concurrent;
    return step;
}
}  // namespace

PruningStep next_pruning_step(const JobSpec& job, const std::map<std::int64_t, std::vector<Trial>>& explorations) {
    std::vector<std::int64_t> batch_sizes = job.batch_sizes;
    std::int64_t default_bs = job.default_batch_size;
    for (std::int64_t round = 0; round < job.num_pruning_rounds; ++round) {
        std::vector<std::int64_t> converged;
        double min_cost_of_round = std::numeric_limits<double>::infinity();
        std::int64_t min_bs_of_round = 0;
        std::sort(batch_sizes.begin(), batch_sizes.end());
        const auto at = std::find(batch_sizes.begin(), batch_sizes.end(), default_bs);
        if (at == batch_sizes.end())
            throw BsoError(500, "Default batch size(" + std::to_string(default_bs) + ") is not in the batch sizes");
        std::vector<std::int64_t> down(batch_sizes.begin(), at + 1);
        std::reverse(down.begin(), down.end());
        std::vector<std::int64_t> up(at + 1, batch_sizes.end());
        for (const auto* direction : {&down, &up}) {
            for (const auto bs : *direction) {
                const auto found = explorations.find(bs);
                if (found == explorations.end() || static_cast<std::int64_t>(found->second.size()) <= round) {
                    return explore(bs);
                }
                const Trial& trial = found->second[static_cast<std::size_t>(round)];
                if (trial.status == TrialStatus::Dispatched) return concurrent();
                if (!trial.converged.value_or(false)) break;
                converged.push_back(bs);
                if (!trial.energy || !trial.time) throw BsoError(400, "Energy or time is not available for the exploration.");
                const double cost = zeus_cost(*trial.energy, *trial.time, job.eta_knob, job.max_power);
                if (cost < min_cost_of_round) {
                    min_cost_of_round = cost;
                    min_bs_of_round = bs;
                }
            }
        }
        default_bs = min_bs_of_round;
        batch_sizes = converged;
        if (batch_sizes.empty())
            throw BsoError(500, "No converged batch sizes has observed. Reconfigure batch_sizes and re-launch the job.");
    }
    std::sort(batch_sizes.begin(), batch_sizes.end());
    PruningStep mab;
    mab.kind = PruningStep::Kind::Mab;
    mab.arms = batch_sizes;
    return mab;
}

ArmState fit_arm(std::int64_t batch_size, double prior_mean, double prior_precision, const std::vector<double>& rewards) {
    if (rewards.empty()) throw BsoError(400, "No rewards to fit the arm.");
    const auto n = static_cast<double>(rewards.size());
    // numpy's var and sum use pairwise summation; for the handful of rewards
    // an arm holds (< 8 per block) that is the plain left-to-right sum.
    const double sum = std::accumulate(rewards.begin(), rewards.end(), 0.0);
    const double mean = sum / n;
    double squares = 0.0;
    for (double r : rewards) squares += (r - mean) * (r - mean);
    const double variance = squares / n;
    ArmState arm;
    arm.batch_size = batch_size;
    arm.num_observations = static_cast<std::int64_t>(rewards.size());
    arm.reward_precision = variance == 0.0 ? std::numeric_limits<double>::infinity() : 1.0 / variance;
    if (std::isinf(arm.reward_precision)) {
        arm.param_precision = std::numeric_limits<double>::infinity();
        arm.param_mean = mean;
    } else {
        arm.param_precision = prior_precision + n * arm.reward_precision;
        arm.param_mean = (prior_precision * prior_mean + arm.reward_precision * sum) / arm.param_precision;
    }
    return arm;
}

std::vector<double> windowed_rewards(std::vector<double> history_newest_first, std::int64_t window_size, double new_reward) {
    if (window_size > 0 && static_cast<std::int64_t>(history_newest_first.size()) > window_size)
        history_newest_first.resize(static_cast<std::size_t>(window_size));  // the query's LIMIT
    if (window_size > 0 && static_cast<std::int64_t>(history_newest_first.size()) >= window_size) {
        history_newest_first.pop_back();
        std::reverse(history_newest_first.begin(), history_newest_first.end());
    }
    history_newest_first.push_back(new_reward);
    return history_newest_first;
}

std::int64_t thompson_predict(const std::vector<ArmState>& arms, std::int64_t num_explorations, Pcg64& rng) {
    PersistentDraws draws(rng);
    return thompson_predict(arms, num_explorations, draws);
}

std::int64_t thompson_predict(const std::vector<ArmState>& arms, std::int64_t num_explorations, DrawSource& draws) {
    if (arms.empty()) throw BsoError(400, "While creating arms, no batch size is selected");
    for (const auto index : draws.generator().permutation(arms.size())) {
        if (arms[index].num_observations < num_explorations) return arms[index].batch_size;
    }
    std::int64_t best = arms.front().batch_size;
    double best_sample = -std::numeric_limits<double>::infinity();
    bool first = true;
    for (const auto& arm : arms) {
        const double sample = draws.generator().normal(arm.param_mean, std::sqrt(1.0 / arm.param_precision));
        if (first || sample > best_sample) {
            best_sample = sample;
            best = arm.batch_size;
            first = false;
        }
    }
    return best;
}

}  // namespace zeus::bso
