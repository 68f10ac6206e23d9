// The batch-size optimizer's decisions as pure functions, identical to the
// original server's (zeus/optimizer/batch_size/server/{optimizer,explorer,mab}.py
// in Zeus 0.16.0): the report() stop rule, pruning exploration and Gaussian
// Thompson sampling. Storage and HTTP live in src/bso/; these functions see
// only values, so tests replay the original's scenarios directly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "zeus/bso/pcg64.hpp"

namespace zeus::bso {

// An error the server answers with `status` and {"message": what()}, as the
// original's ZeusBSOServerBaseError subclasses (400 value/bad operation, 404
// not found, 409 config mismatch, 500 runtime).
class BsoError : public std::runtime_error {
public:
    BsoError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
    [[nodiscard]] int status() const { return status_; }

private:
    int status_;
};

// zeus.utils.metric.zeus_cost, evaluated in the original's order.
double zeus_cost(double energy, double time, double eta_knob, double max_power);

// JobSpecFromClient: the user's JobSpec plus the client's GPU configuration.
struct JobSpec {
    std::optional<std::string> job_id;
    std::string job_id_prefix;
    std::vector<std::int64_t> batch_sizes;  // sorted ascending once validated
    std::int64_t default_batch_size = 0;
    double eta_knob = 0.5;
    std::optional<double> beta_knob = 2.0;
    double target_metric = 0.5;
    bool higher_is_better_metric = true;
    std::int64_t max_epochs = 100;
    std::int64_t num_pruning_rounds = 2;
    std::int64_t window_size = 0;
    double mab_prior_mean = 0.0;
    double mab_prior_precision = 0.0;
    std::int64_t mab_num_explorations = 2;
    std::optional<std::int64_t> mab_seed;
    double max_power = 0.0;
    std::int64_t number_of_gpus = 0;
    std::string gpu_model;

    friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

enum class Stage { Pruning, MAB };
enum class TrialType { Exploration, Concurrent, MAB };
enum class TrialStatus { Dispatched, Succeeded, Failed };

struct Trial {
    std::int64_t trial_number = 0;
    std::int64_t batch_size = 0;
    TrialType type = TrialType::Exploration;
    TrialStatus status = TrialStatus::Dispatched;
    std::optional<double> time;
    std::optional<double> energy;
    std::optional<bool> converged;
};

struct ArmState {
    std::int64_t batch_size = 0;
    double param_mean = 0.0;
    double param_precision = 0.0;
    double reward_precision = 0.0;
    std::int64_t num_observations = 0;
};

// Outcome of one POST /report on a Dispatched trial.
struct ReportDecision {
    bool stop_train = false;
    bool converged = false;
    std::string message;
    double cost = 0.0;  // zeus_cost of the cumulative time and energy
};
struct ReportedProgress {
    std::int64_t batch_size = 0;
    double time = 0.0;    // cumulative, s
    double energy = 0.0;  // cumulative, J
    double metric = 0.0;
    std::int64_t current_epoch = 0;
};
// min_cost: the job's cheapest Succeeded trial so far (none: no early stopping).
ReportDecision decide_report(const JobSpec& job, std::optional<double> min_cost, const ReportedProgress& progress);

// One GET /jobs/batch_size in the pruning stage.
struct PruningStep {
    enum class Kind { Explore, Concurrent, Mab };
    Kind kind = Kind::Explore;
    std::int64_t batch_size = 0;         // Explore: the batch size to explore
    std::vector<std::int64_t> arms;      // Mab: the surviving batch sizes, ascending
};
// explorations: per batch size, the job's non-Failed Exploration trials in
// trial-number order. Concurrent trials use the job's min_cost_batch_size,
// which the caller supplies. Throws BsoError(500) when a round converges nowhere.
PruningStep next_pruning_step(const JobSpec& job, const std::map<std::int64_t, std::vector<Trial>>& explorations);

// GaussianTS._fit_arm: the posterior from the prior over a reward list
// (population variance; one distinct value gives infinite precision).
ArmState fit_arm(std::int64_t batch_size, double prior_mean, double prior_precision, const std::vector<double>& rewards);

// The rewards an arm is refit on after a MAB-stage report: the batch size's
// Succeeded trials' rewards newest first (at most window_size of them when
// window_size > 0), the oldest dropped when the window is full, then the new one.
std::vector<double> windowed_rewards(std::vector<double> history_newest_first, std::int64_t window_size, double new_reward);

// Where Thompson sampling's draws come from. The original keeps one numpy
// generator per job when mab_seed is set (its state stored with the job);
// without a seed it makes a new generator seeded with the current Unix second
// for every draw, so the draws of one request share their seed.
class DrawSource {
public:
    virtual ~DrawSource() = default;
    virtual Pcg64& generator() = 0;
};
class PersistentDraws final : public DrawSource {
public:
    explicit PersistentDraws(Pcg64& rng) : rng_(rng) {}
    Pcg64& generator() override { return rng_; }

private:
    Pcg64& rng_;
};
class ClockSeededDraws final : public DrawSource {
public:
    explicit ClockSeededDraws(std::uint64_t unix_seconds) : seed_(unix_seconds), current_(Pcg64::from_seed(unix_seconds)) {}
    Pcg64& generator() override {
        current_ = Pcg64::from_seed(seed_);
        return current_;
    }

private:
    std::uint64_t seed_;
    Pcg64 current_;
};

// GaussianTS.predict: a random order of the arms, the first with fewer than
// num_explorations observations; otherwise the argmax (first on ties) of one
// normal draw per arm, in the given order.
std::int64_t thompson_predict(const std::vector<ArmState>& arms, std::int64_t num_explorations, DrawSource& draws);
std::int64_t thompson_predict(const std::vector<ArmState>& arms, std::int64_t num_explorations, Pcg64& rng);

}  // namespace zeus::bso
