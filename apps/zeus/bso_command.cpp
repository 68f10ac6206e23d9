// `zeus bso simulate`: the Zeus paper's trace-driven reproduction
// (docs/batch-size-optimizer.md). Each workload recurs on each GPU's power
// trace; the batch-size optimizer's service chooses batch sizes across
// recurrences and the power-limit optimizer, run for real on a simulated GPU
// following the trace (as `zeus power-limit simulate`), chooses the limit the
// first time a batch size runs. Prints energy- and time-to-accuracy against
// the default batch size at the maximum power limit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "option_checks.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/bso/trace_replay.hpp"
#include "zeus/simulation/simulated_power_limit_optimizer.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::cli {
namespace {

struct BsoSimulateFlags {
    std::string train = "data/summary_train.csv";
    std::vector<std::string> power_traces{"data/power-traces/summary_power_a40.csv",
                                          "data/power-traces/summary_power_v100.csv"};
    std::vector<std::string> workloads;  // dataset/network; empty: the paper's six
    std::int64_t recurrences = 0;
    double eta = 0.5;
    std::string beta = "2.0";
    std::uint64_t seed = 1;
    std::size_t steady_window = 10;
    std::string format = "text";
};

int fail(const Error& error, int code) {
    std::cerr << "zeus: bso simulate: " << error.describe() << "\n";
    return code;
}

struct Summary {
    double eta_ratio = 0;  // Zeus / baseline, all recurrences
    double tta_ratio = 0;
    double steady_eta_ratio = 0;  // the last `steady_window` recurrences
    double steady_tta_ratio = 0;
    std::int64_t steady_batch_size = 0;  // most frequent among their runs
    double steady_power_limit = 0;
};

Summary summarize(const bso::ReplayResult& r, std::size_t window) {
    const auto energy = r.recurrence_energy();
    const auto time = r.recurrence_time();
    const auto n = static_cast<double>(energy.size());
    Summary s;
    double e_all = 0, t_all = 0, e_last = 0, t_last = 0;
    const std::size_t last = std::min(window, energy.size());
    for (std::size_t i = 0; i < energy.size(); ++i) {
        e_all += energy[i];
        t_all += time[i];
        if (i >= energy.size() - last) {
            e_last += energy[i];
            t_last += time[i];
        }
    }
    s.eta_ratio = e_all / (n * r.baseline_energy_j);
    s.tta_ratio = t_all / (n * r.baseline_time_s);
    s.steady_eta_ratio = e_last / (static_cast<double>(last) * r.baseline_energy_j);
    s.steady_tta_ratio = t_last / (static_cast<double>(last) * r.baseline_time_s);
    std::map<std::pair<std::int64_t, double>, int> counts;
    for (const auto& run : r.runs)
        if (run.recurrence > r.recurrences - static_cast<std::int64_t>(last)) ++counts[{run.batch_size, run.power_limit_w}];
    int best = 0;
    for (const auto& [key, count] : counts)
        if (count > best) {
            best = count;
            s.steady_batch_size = key.first;
            s.steady_power_limit = key.second;
        }
    return s;
}

std::string percent(double ratio) { return fmt::format("{:.1f}%", (1.0 - ratio) * 100.0 + 0.0); }
// Against the baseline, signed: "-36.1%" is less, "+5.6%" more.
std::string change(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1.0) * 100.0 + 0.0); }

nlohmann::ordered_json to_json(const bso::ReplayResult& r, const std::string& gpu, const Summary& s, std::size_t window) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const auto& run : r.runs) {
        runs.push_back({{"recurrence", run.recurrence},
                        {"batch_size", run.batch_size},
                        {"power_limit_w", run.power_limit_w},
                        {"profiled", run.profiled},
                        {"epochs", run.epochs},
                        {"time_s", run.time_s},
                        {"energy_j", run.energy_j},
                        {"converged", run.converged}});
    }
    return {{"workload", r.job.name()},
            {"optimizer", r.job.optimizer},
            {"gpu", gpu},
            {"target_metric", r.job.target_metric},
            {"max_epochs", r.job.max_epochs},
            {"default_batch_size", r.job.default_batch_size},
            {"batch_sizes", r.batch_sizes},
            {"power_limits", r.power_limits},
            {"max_power_limit_w", r.max_power_limit_w},
            {"recurrences", r.recurrences},
            {"baseline", {{"epochs", r.baseline_epochs}, {"time_s", r.baseline_time_s}, {"energy_j", r.baseline_energy_j}}},
            {"energy_ratio", s.eta_ratio},
            {"time_ratio", s.tta_ratio},
            {"steady_recurrences", std::min<std::size_t>(window, static_cast<std::size_t>(r.recurrences))},
            {"steady_energy_ratio", s.steady_eta_ratio},
            {"steady_time_ratio", s.steady_tta_ratio},
            {"steady_batch_size", s.steady_batch_size},
            {"steady_power_limit_w", s.steady_power_limit},
            {"runs", std::move(runs)}};
}

// The defaults are the repository's data/ files, relative to the current
// directory: an installed zeus run elsewhere has none of them, and must say
// which flag to give rather than that a path it never saw is missing.
std::optional<Error> missing_default_trace(const BsoSimulateFlags& f) {
    const BsoSimulateFlags defaults;
    std::vector<std::pair<std::string, std::string>> used;  // flag, path
    if (f.train == defaults.train) used.emplace_back("--train", f.train);
    if (f.power_traces == defaults.power_traces) {
        for (const auto& p : f.power_traces) used.emplace_back("--power-trace", p);
    }
    for (const auto& [flag, path] : used) {
        std::error_code ec;
        if (std::filesystem::exists(path, ec)) continue;
        return Error{ErrorCode::NotFound,
                     fmt::format("{}: the default {} is not under the current directory ({}); the defaults are the "
                                 "paper's traces in the data/ folder of the zeus repository",
                                 flag, path, std::filesystem::current_path(ec).string()),
                     fmt::format("run from a checkout of the repository, or give {} PATH (and the other trace flags)",
                                 flag),
                     0};
    }
    return std::nullopt;
}

// --beta: the early-stopping factor, or nullopt for "none".
Result<std::optional<double>> parse_beta(const std::string& text) {
    if (text == "none") return std::optional<double>{};
    std::optional<double> beta;
    try {
        std::size_t used = 0;
        beta = std::stod(text, &used);
        if (used != text.size() || !(*beta > 0) || !std::isfinite(*beta)) throw std::invalid_argument("beta");
    } catch (const std::exception&) {
        return Error{ErrorCode::InvalidArgument, fmt::format("--beta {}: not a positive number", text),
                     "give a number > 0 (the early-stopping factor) or 'none' to turn early stopping off", 0};
    }
    return beta;
}

// The paper's jobs named by --workload (by name or dataset), or all of them.
Result<std::vector<bso::TraceJob>> select_jobs(const std::vector<std::string>& workloads) {
    std::vector<bso::TraceJob> jobs;
    if (workloads.empty()) jobs = bso::paper_jobs();
    for (const auto& name : workloads) {
        const auto& known = bso::paper_jobs();
        auto it = std::find_if(known.begin(), known.end(), [&](const auto& j) { return j.name() == name || j.dataset == name; });
        if (it == known.end()) {
            std::vector<std::string> names;
            for (const auto& j : known) names.push_back(j.name());
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("--workload {}: not one of the paper's workloads", name),
                         fmt::format("use one of {}", fmt::join(names, ", ")), 0};
        }
        jobs.push_back(*it);
    }
    return jobs;
}

// One GPU of the replay: its power trace, and the power-limit optimizer on a
// simulated GPU that follows it.
struct TracedGpu {
    bso::PowerTrace trace;
    simulation::SimulatedPowerLimitOptimizer limits;
};

Result<std::vector<TracedGpu>> open_traced_gpus(const BsoSimulateFlags& f) {
    std::vector<TracedGpu> gpus;
    for (const auto& csv : f.power_traces) {
        auto trace = bso::PowerTrace::read(csv);
        if (!trace) return trace.error();
        auto limits = simulation::SimulatedPowerLimitOptimizer::open(csv, f.eta);
        if (!limits) return limits.error();
        gpus.push_back(TracedGpu{std::move(trace).value(), std::move(limits).value()});
    }
    return gpus;
}

// One job on one GPU as a markdown row or text lines (JSON is printed whole at the end).
void print_result(const BsoSimulateFlags& f, const bso::TraceJob& job, const std::string& gpu,
                  const bso::ReplayResult& result, const Summary& s) {
    if (f.format == "markdown") {
        std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {}, {:g} W |\n", job.name(), gpu,
                                 result.job.default_batch_size, result.recurrences, percent(s.eta_ratio),
                                 percent(s.tta_ratio), percent(s.steady_eta_ratio), percent(s.steady_tta_ratio),
                                 s.steady_batch_size, s.steady_power_limit);
    } else {
        std::cout << fmt::format(
            "{} on {}: {} recurrences, default batch size {} at {:g} W: {:.4g} J, {:.4g} s per recurrence\n"
            "  all recurrences: energy-to-accuracy {}, time-to-accuracy {} against the baseline\n"
            "  last {}: energy {}, time {}, mostly batch size {} at {:g} W\n",
            job.name(), gpu, result.recurrences, result.job.default_batch_size, result.max_power_limit_w,
            result.baseline_energy_j, result.baseline_time_s, change(s.eta_ratio), change(s.tta_ratio),
            std::min<std::int64_t>(static_cast<std::int64_t>(f.steady_window), result.recurrences),
            change(s.steady_eta_ratio), change(s.steady_tta_ratio), s.steady_batch_size, s.steady_power_limit);
    }
}

// Replays every job on every GPU, printing each result as it comes.
Status replay_all(const BsoSimulateFlags& f, const std::vector<bso::TraceJob>& jobs, const bso::TrainTrace& train,
                  const std::vector<TracedGpu>& gpus, const bso::ReplayOptions& options) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    if (f.format == "markdown") {
        std::cout << "| workload | GPU | b0 | recurrences | ETA saved | TTA saved | last " << f.steady_window
                  << ": ETA saved | TTA saved | batch size, limit |\n"
                  << "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    }
    for (const auto& job : jobs) {
        for (const auto& gpu : gpus) {
            auto result = bso::replay_recurring_job(
                job, train, gpu.trace, gpu.limits.gpu(), options,
                [&](std::int64_t bs, const bso::LimitTable& limits) { return gpu.limits.choose(job, bs, limits); });
            if (!result) return result.error();
            const auto s = summarize(*result, f.steady_window);
            if (f.format == "json") {
                all.push_back(to_json(*result, gpu.limits.gpu(), s, f.steady_window));
            } else {
                print_result(f, job, gpu.limits.gpu(), *result, s);
            }
            std::cout << std::flush;
        }
    }
    if (f.format == "json") std::cout << json_text(all, 2) << "\n";
    return {};
}

int run_simulate(const BsoSimulateFlags& f) {
    // A file the user named is checked before the defaults they did not name.
    std::optional<Result<bso::TrainTrace>> given_train;
    if (f.train != BsoSimulateFlags{}.train) {
        given_train = bso::TrainTrace::read(f.train);
        if (!*given_train) return fail(given_train->error(), 2);
    }
    if (auto missing = missing_default_trace(f)) return fail(*missing, 2);
    auto beta = parse_beta(f.beta);
    if (!beta) return fail(beta.error(), 2);
    auto jobs = select_jobs(f.workloads);
    if (!jobs) return fail(jobs.error(), 2);
    auto train = given_train ? std::move(*given_train) : bso::TrainTrace::read(f.train);
    if (!train) return fail(train.error(), 2);
    auto gpus = open_traced_gpus(f);
    if (!gpus) return fail(gpus.error(), 2);
    bso::ReplayOptions options;
    options.recurrences = f.recurrences;
    options.eta_knob = f.eta;
    options.beta_knob = *beta;
    options.seed = f.seed;
    if (auto replayed = replay_all(f, *jobs, *train, *gpus, options); !replayed) return fail(replayed.error(), 1);
    return 0;
}

}  // namespace

Command add_bso(CLI::App& parent) {
    auto* app = parent.add_subcommand("bso", "the batch-size optimizer's trace-driven reproduction: simulate");
    app->require_subcommand(1);
    auto f = std::make_shared<BsoSimulateFlags>();
    auto* s = app->add_subcommand("simulate",
                                  "replay the Zeus paper's recurring jobs over the train and power traces and print "
                                  "energy- and time-to-accuracy against the default batch size at the maximum limit");
    s->add_option("--train", f->train, "train trace CSV (epochs to the target per batch size and seed)")
        ->capture_default_str();
    s->add_option("--power-trace", f->power_traces, "power trace CSV of one GPU (repeatable)")->capture_default_str();
    s->add_option("--workload", f->workloads,
                  "DATASET/NETWORK of the paper's workloads (repeatable; default: all six)");
    s->add_option("--recurrences", f->recurrences, "recurrences per job (default: 2 x batch sizes x power limits)")
        ->check(whole_number(1, 100000));
    s->add_option("--eta", f->eta, "eta_knob: weight of energy against time in the cost")
        ->check(finite_number(0.0, 1.0, ""))
        ->capture_default_str();
    s->add_option("--beta", f->beta, "beta_knob: early-stop a run whose cost passes beta x the cheapest (or 'none')")
        ->capture_default_str();
    s->add_option("--seed", f->seed, "seed of the optimizer's Thompson sampling and of the run sampler")
        ->check(whole_number(0, 1LL << 62))
        ->capture_default_str();
    s->add_option("--steady", f->steady_window, "recurrences at the end summarised as the steady state")
        ->check(whole_number(1, 100000))
        ->capture_default_str();
    s->add_option("--format", f->format, "output format")
        ->check(one_of({"text", "markdown", "json"}))
        ->capture_default_str();
    return [app, s, f] {
        if (s->parsed()) return run_simulate(*f);
        std::cerr << app->help();
        return 2;
    };
}

}  // namespace zeus::cli
