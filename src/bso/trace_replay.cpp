#include "zeus/bso/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <numeric>
#include <set>

#include "bso/database.hpp"
#include "bso/service.hpp"
#include "platform/csv_line.hpp"
#include "zeus/platform/read_user_file.hpp"
#include "zeus/bso/pcg64.hpp"

namespace zeus::bso {
namespace {

constexpr std::string_view kTrainHeader =
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch";
constexpr std::string_view kPowerHeader =
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power";

Error bad_csv(const std::string& what, const std::string& path, std::size_t line, const std::string& problem,
              std::string_view header) {
    return Error{ErrorCode::InvalidConfig, fmt::format("{} {} line {}: {}", what, path, line, problem),
                 fmt::format("give a CSV with the columns {} (data/)", header), 0};
}

// A whole field as a number, or nothing.
std::optional<double> number(const std::string& text) {
    try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used != text.size()) return std::nullopt;
        return value;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Reads a CSV with `header`, handing each line's fields (exactly the
// header's count) to `row`, which returns an error message or "".
template <typename RowFn>
Status read_csv(const std::string& what, std::string_view flag, const std::string& path, std::string_view header,
                RowFn&& row) {
    auto text = read_user_file(path, {what, flag});
    if (!text) return text.error();
    std::istringstream in(*text);
    const std::size_t columns = split_csv_line(header).size();
    std::string line;
    if (!read_csv_header(in, line) || line.rfind(header, 0) != 0)
        return bad_csv(what, path, 1, fmt::format("the header is not '{}'", header), header);
    std::size_t count = 0;
    for (std::size_t number_ = 2; std::getline(in, line); ++number_) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const auto fields = split_csv_line(line);
        if (fields.size() != columns)
            return bad_csv(what, path, number_, fmt::format("{} fields, expected {}", fields.size(), columns), header);
        if (auto problem = row(fields); !problem.empty()) return bad_csv(what, path, number_, problem, header);
        ++count;
    }
    if (count == 0) return bad_csv(what, path, 2, "no rows", header);
    return {};
}

std::optional<std::int64_t> positive_integer(const std::string& text) {
    const auto value = number(text);
    if (!value || *value <= 0 || *value != std::floor(*value) || *value > 1e15) return std::nullopt;
    return static_cast<std::int64_t>(*value);
}

// Epoch cost in the optimizer's terms (zeus_cost per epoch).
double epoch_cost(const EpochAtLimit& epoch, double eta_knob, double max_power) {
    return zeus_cost(epoch.energy_j(), epoch.time_s, eta_knob, max_power);
}

}  // namespace

const std::vector<TraceJob>& paper_jobs() {
    // dataset, network, optimizer, target, higher is better, max epochs, b0.
    static const std::vector<TraceJob> jobs{
        {"cifar100", "shufflenetv2", "adadelta", 0.6, true, 100, 1024},
        {"imagenet", "resnet50", "adadelta", 0.65, true, 100, 256},
        {"squad", "bert_base_uncased", "adamw", 84.0, true, 6, 32},
        {"librispeech", "deepspeech2", "adamw", 40.0, false, 16, 256},  // word error rate
        {"movielens-1m", "ncf", "adam", 0.41, true, 100, 1024},
        {"sentiment140", "bert_base_uncased", "adamw", 0.84, true, 10, 128},
    };
    return jobs;
}

Result<TrainTrace> TrainTrace::read(const std::string& csv_path) {
    TrainTrace trace;
    auto status = read_csv("train trace", "--train", csv_path, kTrainHeader, [&](const std::vector<std::string>& f) -> std::string {
        Row row;
        row.dataset = f[0];
        row.network = f[1];
        row.optimizer = f[3];
        const auto batch = positive_integer(f[2]);
        if (!batch) return fmt::format("batch_size '{}' is not a positive whole number", f[2]);
        row.batch_size = *batch;
        const auto target = number(f[6]);
        if (!target || !std::isfinite(*target)) return fmt::format("target_metric '{}' is not a number", f[6]);
        row.target_metric = *target;
        row.path.run = f[5];
        if (f[7] != "nan" && !f[7].empty()) {
            const auto epoch = positive_integer(f[7]);
            if (!epoch) return fmt::format("target_epoch '{}' is neither a positive whole number nor nan", f[7]);
            row.path.target_epoch = *epoch;
        }
        trace.rows_.push_back(std::move(row));
        return "";
    });
    if (!status) return status.error();
    return trace;
}

std::vector<TrainPath> TrainTrace::paths(const TraceJob& job, std::int64_t batch_size) const {
    std::vector<TrainPath> found;
    for (const auto& r : rows_) {
        // The trace's targets are written with few digits ("0.41", "84.0"):
        // equal up to a relative 1e-9.
        if (r.dataset == job.dataset && r.network == job.network && r.optimizer == job.optimizer &&
            r.batch_size == batch_size &&
            std::abs(r.target_metric - job.target_metric) <= 1e-9 * std::max(1.0, std::abs(job.target_metric)))
            found.push_back(r.path);
    }
    return found;
}

Result<PowerTrace> PowerTrace::read(const std::string& csv_path, std::string_view flag) {
    PowerTrace trace;
    auto status = read_csv("power trace", flag, csv_path, kPowerHeader, [&](const std::vector<std::string>& f) -> std::string {
        const auto batch = positive_integer(f[2]);
        if (!batch) return fmt::format("batch_size '{}' is not a positive whole number", f[2]);
        const auto limit = number(f[4]);
        const auto time = number(f[5]);
        const auto power = number(f[6]);
        if (!limit || !(*limit > 0) || !std::isfinite(*limit)) return fmt::format("power_limit '{}' is not a positive number", f[4]);
        if (!time || !(*time > 0) || !std::isfinite(*time)) return fmt::format("time_per_epoch '{}' is not a positive number", f[5]);
        if (!power || !(*power > 0) || !std::isfinite(*power)) return fmt::format("average_power '{}' is not a positive number", f[6]);
        auto& batches = trace.table_[Key{f[0], f[1], f[3]}];
        if (!batches.contains(*batch)) trace.workloads_.push_back(Workload{f[0], f[1], f[3], *batch});
        auto& limits = batches[*batch];
        if (limits.contains(*limit)) return fmt::format("power limit {} W of batch size {} appears twice", *limit, *batch);
        limits[*limit] = EpochAtLimit{*time, *power};
        trace.max_limit_ = std::max(trace.max_limit_, *limit);
        return "";
    });
    if (!status) return status.error();
    return trace;
}

std::map<std::int64_t, LimitTable> PowerTrace::batch_sizes(const TraceJob& job) const {
    const auto it = table_.find(Key{job.dataset, job.network, job.optimizer});
    return it == table_.end() ? std::map<std::int64_t, LimitTable>{} : it->second;
}

LimitTable PowerTrace::limits(const Workload& workload) const {
    const auto job = table_.find(Key{workload.dataset, workload.network, workload.optimizer});
    if (job == table_.end()) return {};
    const auto batch = job->second.find(workload.batch_size);
    return batch == job->second.end() ? LimitTable{} : batch->second;
}

std::vector<double> ReplayResult::recurrence_energy() const {
    std::vector<double> total(static_cast<std::size_t>(recurrences), 0.0);
    for (const auto& r : runs) total[static_cast<std::size_t>(r.recurrence - 1)] += r.energy_j;
    return total;
}

std::vector<double> ReplayResult::recurrence_time() const {
    std::vector<double> total(static_cast<std::size_t>(recurrences), 0.0);
    for (const auto& r : runs) total[static_cast<std::size_t>(r.recurrence - 1)] += r.time_s;
    return total;
}

double cheapest_limit(const LimitTable& limits, double eta_knob) {
    const double max_power = limits.rbegin()->first;
    double best_limit = max_power;
    double best_cost = epoch_cost(limits.rbegin()->second, eta_knob, max_power);
    // From the highest limit down, as the optimizer profiles: ties keep the higher.
    for (auto it = limits.rbegin(); it != limits.rend(); ++it) {
        const double cost = epoch_cost(it->second, eta_knob, max_power);
        if (cost < best_cost) {
            best_cost = cost;
            best_limit = it->first;
        }
    }
    return best_limit;
}

namespace {

using PathsByBatchSize = std::map<std::int64_t, std::vector<TrainPath>>;

// "<job> on <gpu>: <message>", as every replay error reads.
Error replay_error(const TraceJob& job, const std::string& gpu_name, const std::string& message,
                   const std::string& hint) {
    return Error{ErrorCode::InvalidConfig, fmt::format("{} on {}: {}", job.name(), gpu_name, message), hint, 0};
}

// The batch sizes traced in both files (with runs for the job's target) and
// their runs; fills the result's batch sizes, power limits and recurrences.
Result<PathsByBatchSize> traced_paths(const TraceJob& job, const TrainTrace& train, const PowerTrace& power,
                                      const std::map<std::int64_t, LimitTable>& traced, const std::string& gpu_name,
                                      const ReplayOptions& options, ReplayResult& result) {
    result.job = job;
    result.job.default_batch_size = std::min(job.default_batch_size, traced.rbegin()->first);
    PathsByBatchSize paths;
    for (const auto& [bs, limits] : traced) {
        auto p = train.paths(job, bs);
        if (!p.empty()) {
            result.batch_sizes.push_back(bs);
            paths[bs] = std::move(p);
        }
    }
    const std::int64_t b0 = result.job.default_batch_size;
    if (!paths.contains(b0))
        return replay_error(job, gpu_name,
                            fmt::format("the train trace has no runs of the default batch size {} for target {}", b0,
                                        job.target_metric),
                            "give the train trace of this workload (data/summary_train.csv) or another --target");
    result.power_limits = traced.at(b0).size();
    result.max_power_limit_w = power.max_power_limit();
    result.recurrences = options.recurrences > 0
                             ? options.recurrences
                             : 2 * static_cast<std::int64_t>(result.batch_sizes.size() * result.power_limits);
    return paths;
}

// Baseline: the default batch size at its highest traced limit, for its runs' mean epochs.
Status set_baseline(const std::vector<TrainPath>& default_paths, const LimitTable& default_limits,
                    const std::string& gpu_name, ReplayResult& result) {
    const std::int64_t b0 = result.job.default_batch_size;
    double epochs_sum = 0;
    for (const auto& p : default_paths) {
        if (!p.target_epoch)
            return replay_error(
                result.job, gpu_name,
                fmt::format("run {} of the default batch size {} never reaches the target {}", p.run, b0,
                            result.job.target_metric),
                "the baseline needs a default batch size that always reaches the target: choose another target");
        epochs_sum += static_cast<double>(*p.target_epoch);
    }
    const auto& at_max = default_limits.rbegin()->second;
    result.baseline_epochs = epochs_sum / static_cast<double>(default_paths.size());
    result.baseline_time_s = result.baseline_epochs * at_max.time_s;
    result.baseline_energy_j = result.baseline_epochs * at_max.energy_j();
    return {};
}

// The job as the server's service registers it.
JobSpec trace_job_spec(const ReplayResult& result, const ReplayOptions& options, const std::string& gpu_name) {
    const TraceJob& job = result.job;
    JobSpec spec;
    spec.job_id = "trace-" + job.dataset + "-" + job.network;
    spec.job_id_prefix = "trace";
    spec.batch_sizes = result.batch_sizes;
    spec.default_batch_size = job.default_batch_size;
    spec.eta_knob = options.eta_knob;
    spec.beta_knob = options.beta_knob;
    spec.target_metric = job.target_metric;
    spec.higher_is_better_metric = job.higher_is_better;
    spec.max_epochs = job.max_epochs;
    spec.mab_seed = static_cast<std::int64_t>(options.seed);
    spec.max_power = result.max_power_limit_w;
    spec.number_of_gpus = 1;
    spec.gpu_model = gpu_name;
    return spec;
}

// Runs the training runs the optimizer asks for, each along a training path
// of its batch size drawn from the seeded sampler. The service's BsoError
// passes through.
class RunReplayer {
  public:
    RunReplayer(Service& service, std::string job_id, const TraceJob& job, const std::string& gpu_name,
                const std::map<std::int64_t, LimitTable>& traced, const PathsByBatchSize& paths,
                const ReplayOptions& options, const PowerLimitChooser& choose_limit)
        : service_(service),
          job_id_(std::move(job_id)),
          job_(job),
          gpu_name_(gpu_name),
          traced_(traced),
          paths_(paths),
          choose_limit_(choose_limit),
          sampler_(Pcg64::from_seed(options.seed)),
          // A metric short of the target, for the epochs before it is reached.
          short_of_target_(job.higher_is_better ? job.target_metric - 1.0 : job.target_metric + 1.0) {}

    Result<ReplayRun> next_run(std::int64_t recurrence) {
        const TrialIdentity trial = service_.predict(job_id_);
        const LimitTable& limits = traced_.at(trial.batch_size);
        ReplayRun run;
        run.recurrence = recurrence;
        run.batch_size = trial.batch_size;
        if (auto limited = set_power_limit(run, limits); !limited) return limited.error();
        // One training path of this batch size, uniformly.
        const auto& candidates = paths_.at(trial.batch_size);
        const TrainPath& path = candidates[sampler_.bounded(candidates.size() - 1)];
        train(run, trial, limits, path);
        return run;
    }

  private:
    // The limit chosen the first time a batch size runs (that run profiles), kept after.
    Status set_power_limit(ReplayRun& run, const LimitTable& limits) {
        if (auto known = chosen_limit_.find(run.batch_size); known != chosen_limit_.end()) {
            run.power_limit_w = known->second;
            return {};
        }
        auto limit = choose_limit_(run.batch_size, limits);
        if (!limit) return limit.error();
        if (!limits.contains(*limit))
            return replay_error(job_, gpu_name_,
                                fmt::format("the power-limit optimizer chose {} W, which batch size {} was not "
                                            "traced at",
                                            *limit, run.batch_size),
                                "profile only the traced limits");
        run.power_limit_w = chosen_limit_[run.batch_size] = *limit;
        run.profiled = true;
        return {};
    }

    // Epochs along `path`, reported to the service until it stops the run.
    void train(ReplayRun& run, const TrialIdentity& trial, const LimitTable& limits, const TrainPath& path) {
        // The profiling epoch: every limit an equal share.
        double profiling_time = 0, profiling_energy = 0;
        for (const auto& [w, e] : limits) {
            profiling_time += e.time_s / static_cast<double>(limits.size());
            profiling_energy += e.energy_j() / static_cast<double>(limits.size());
        }
        const EpochAtLimit& steady = limits.at(run.power_limit_w);
        for (std::int64_t epoch = 1;; ++epoch) {
            const bool profiling_epoch = run.profiled && epoch == 1;
            run.time_s += profiling_epoch ? profiling_time : steady.time_s;
            run.energy_j += profiling_epoch ? profiling_energy : steady.energy_j();
            run.epochs = epoch;
            const bool reached = path.target_epoch && epoch >= *path.target_epoch;
            TrainingResult report;
            report.trial = trial;
            report.progress = ReportedProgress{trial.batch_size, run.time_s, run.energy_j,
                                               reached ? job_.target_metric : short_of_target_, epoch};
            const auto answer = service_.report(report);
            if (answer.stop_train) {
                run.converged = answer.converged;
                return;
            }
        }
    }

    Service& service_;
    const std::string job_id_;
    const TraceJob& job_;
    const std::string& gpu_name_;
    const std::map<std::int64_t, LimitTable>& traced_;
    const PathsByBatchSize& paths_;
    const PowerLimitChooser& choose_limit_;
    Pcg64 sampler_;
    const double short_of_target_;
    std::map<std::int64_t, double> chosen_limit_;
};

}  // namespace

Result<ReplayResult> replay_recurring_job(const TraceJob& job, const TrainTrace& train, const PowerTrace& power,
                                          const std::string& gpu_name, const ReplayOptions& options,
                                          const PowerLimitChooser& choose_limit) {
    const auto traced = power.batch_sizes(job);
    if (traced.empty())
        return replay_error(job, gpu_name,
                            fmt::format("the power trace has no rows for {} with {}", job.name(), job.optimizer),
                            "give the power trace this workload was measured in (data/power-traces/)");
    ReplayResult result;
    auto paths = traced_paths(job, train, power, traced, gpu_name, options, result);
    if (!paths) return paths.error();
    const std::int64_t b0 = result.job.default_batch_size;
    if (auto baseline = set_baseline(paths->at(b0), traced.at(b0), gpu_name, result); !baseline) {
        return baseline.error();
    }

    // The server's service, in memory.
    Service service(Database::open(":memory:"), [] { return 0.0; });
    const JobSpec spec = trace_job_spec(result, options, gpu_name);
    service.register_job(spec);
    RunReplayer replayer(service, *spec.job_id, job, gpu_name, traced, *paths, options, choose_limit);
    try {
        for (std::int64_t recurrence = 1; recurrence <= result.recurrences; ++recurrence) {
            bool converged = false;
            for (std::int64_t attempt = 0; attempt < options.max_tries && !converged; ++attempt) {
                auto run = replayer.next_run(recurrence);
                if (!run) return run.error();
                converged = run->converged;
                result.runs.push_back(*run);
            }
            if (!converged)
                return replay_error(
                    job, gpu_name,
                    fmt::format("recurrence {} did not reach the target in {} runs", recurrence, options.max_tries),
                    "the target may be unreachable at these batch sizes; lower --beta or choose another target");
        }
    } catch (const BsoError& e) {
        return replay_error(job, gpu_name,
                            fmt::format("the batch-size optimizer answered {}: {}", e.status(), e.what()),
                            "see docs/batch-size-optimizer.md for what the optimizer refuses");
    }
    return result;
}

}  // namespace zeus::bso
