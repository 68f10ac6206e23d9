// Trace-driven reproduction of the Zeus paper (NSDI '23): a recurring
// training job replayed over the published traces -- epochs to the target
// metric per batch size and seed (data/summary_train.csv) and time and power
// per epoch per batch size and power limit (data/power-traces/) -- with the
// batch-size optimizer's own service choosing the batch size of each
// recurrence and a power-limit chooser (the power-limit optimizer) picking the
// limit the first time a batch size runs, as the paper's JIT profiler does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::bso {

// One recurring job of the paper, as the original's reproduction scripts
// define it (examples/research_reproducibility/zeus_nsdi23/run_alibaba.py).
struct TraceJob {
    std::string dataset;
    std::string network;
    std::string optimizer;
    double target_metric = 0;
    bool higher_is_better = true;
    std::int64_t max_epochs = 0;
    std::int64_t default_batch_size = 0;  // capped at the GPU's largest traced batch size

    // "librispeech/deepspeech2"
    [[nodiscard]] std::string name() const { return dataset + "/" + network; }
};
// The six workloads of the paper with the original's targets, epoch limits
// and default batch sizes.
const std::vector<TraceJob>& paper_jobs();

// One training run of the train trace: the epoch it first reached the
// target, or none when it never did.
struct TrainPath {
    std::string run;
    std::optional<std::int64_t> target_epoch;
};

class TrainTrace {
public:
    // Columns dataset,network,batch_size,optimizer,learning_rate,run,
    // target_metric,target_epoch; errors name the file, line and column.
    static Result<TrainTrace> read(const std::string& csv_path);
    // The runs of `job` at `batch_size` for the job's target metric, in file order.
    [[nodiscard]] std::vector<TrainPath> paths(const TraceJob& job, std::int64_t batch_size) const;

private:
    struct Row {
        std::string dataset, network, optimizer;
        std::int64_t batch_size = 0;
        double target_metric = 0;
        TrainPath path;
    };
    std::vector<Row> rows_;
};

// Time and average power of one epoch at one power limit.
struct EpochAtLimit {
    double time_s = 0;
    double average_power_w = 0;
    [[nodiscard]] double energy_j() const { return time_s * average_power_w; }
};
using LimitTable = std::map<double, EpochAtLimit>;  // power limit (W) -> epoch

class PowerTrace {
public:
    // Columns dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power.
    // `flag` names the option that gave the path, for the fix of a file that
    // cannot be read. The one power-trace reader: `zeus bso simulate` and
    // `zeus power-limit simulate` (zeus/simulation/trace_simulation.hpp).
    static Result<PowerTrace> read(const std::string& csv_path, std::string_view flag = "--power-trace");
    // Per batch size, its limits; empty when the job was not traced.
    [[nodiscard]] std::map<std::int64_t, LimitTable> batch_sizes(const TraceJob& job) const;

    // One traced (dataset, network, optimizer, batch size).
    struct Workload {
        std::string dataset, network, optimizer;
        std::int64_t batch_size = 0;
    };
    // Every workload, in the order of its first row in the file.
    [[nodiscard]] const std::vector<Workload>& workloads() const { return workloads_; }
    // A workload's limits (empty for one not in the file).
    [[nodiscard]] LimitTable limits(const Workload& workload) const;
    // The largest power limit in the file: the GPU's maximum, the MaxPower of
    // the cost (the original's simulator takes the same).
    [[nodiscard]] double max_power_limit() const { return max_limit_; }

private:
    struct Key {
        std::string dataset, network, optimizer;
        auto operator<=>(const Key&) const = default;
    };
    std::map<Key, std::map<std::int64_t, LimitTable>> table_;
    std::vector<Workload> workloads_;
    double max_limit_ = 0;
};

// The limit the power-limit optimizer settles on for a batch size, given
// that batch size's traced limits.
using PowerLimitChooser = std::function<Result<double>(std::int64_t batch_size, const LimitTable& limits)>;

struct ReplayOptions {
    std::int64_t recurrences = 0;  // 0: 2 * |batch sizes| * |power limits|, as the paper
    double eta_knob = 0.5;
    std::optional<double> beta_knob = 2.0;
    std::uint64_t seed = 1;        // the optimizer's mab_seed and the path sampler's
    std::int64_t max_tries = 20;   // runs per recurrence before the target counts as unreachable
};

// One training run (a recurrence may take several: a run stopped short of
// the target is relaunched, as the client's TrainFailError asks).
struct ReplayRun {
    std::int64_t recurrence = 0;  // from 1
    std::int64_t batch_size = 0;
    double power_limit_w = 0;
    bool profiled = false;  // first run at this batch size: its first epoch profiles the limits
    std::int64_t epochs = 0;
    double time_s = 0;
    double energy_j = 0;
    bool converged = false;
};

struct ReplayResult {
    TraceJob job;
    std::vector<std::int64_t> batch_sizes;
    std::size_t power_limits = 0;  // traced at the default batch size
    double max_power_limit_w = 0;
    std::int64_t recurrences = 0;
    // The baseline: the default batch size at the maximum limit, its mean
    // epochs to the target over the traced runs times the traced epoch.
    double baseline_epochs = 0;
    double baseline_time_s = 0;
    double baseline_energy_j = 0;
    std::vector<ReplayRun> runs;

    // Per recurrence, the energy and time of its runs together.
    [[nodiscard]] std::vector<double> recurrence_energy() const;
    [[nodiscard]] std::vector<double> recurrence_time() const;
};

// Replays `job` on one GPU's power trace. The batch-size optimizer is the
// server's own service over an in-memory SQLite database, fed one report per
// epoch with cumulative time and energy, so its decisions (pruning, early
// stopping, Thompson sampling) are exactly the server's. A run's first epoch
// at a new batch size is spent profiling: every traced limit runs an equal
// share of it (the paper's JIT profiler, the original simulator's
// accounting); the rest runs at the chooser's limit.
Result<ReplayResult> replay_recurring_job(const TraceJob& job, const TrainTrace& train, const PowerTrace& power,
                                          const std::string& gpu_name, const ReplayOptions& options,
                                          const PowerLimitChooser& choose_limit);

// What the original's ZeusCost selector picks from a traced limit table:
// argmin of eta*E + (1-eta)*max(limits)*T per epoch, the highest limit on ties.
double cheapest_limit(const LimitTable& limits, double eta_knob);

}  // namespace zeus::bso
