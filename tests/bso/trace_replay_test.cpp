// The trace-driven reproduction (replay_recurring_job) on the real traces in
// data/: every expectation is computed here from the CSVs, parsed by this
// test's own reader -- the baseline, each run's time and energy, the limit
// the chooser must return, the early-stopping point.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "bso/service.hpp"
#include "support/csv_fields.hpp"
#include "zeus/bso/trace_replay.hpp"
#include "support/build_paths.hpp"

namespace zeus::bso {
namespace {

const std::string kData = zeus::testing::data_dir();
const std::string kTrain = kData + "/summary_train.csv";
const std::string kV100 = kData + "/power-traces/summary_power_v100.csv";
const std::string kA40 = kData + "/power-traces/summary_power_a40.csv";

using zeus::testing::csv_fields;
const auto& fields = csv_fields;

// This test's own view of the traces.
struct Epoch {
    double time = 0, power = 0;
};
struct Traces {
    std::map<std::int64_t, std::vector<std::optional<std::int64_t>>> epochs;  // batch size -> runs' target epochs
    std::map<std::int64_t, std::map<double, Epoch>> limits;                  // batch size -> limit -> epoch
    double gpu_max_limit = 0;
};

Traces load(const TraceJob& job, const std::string& power_csv) {
    Traces t;
    std::ifstream power(power_csv);
    std::string line;
    std::getline(power, line);
    while (std::getline(power, line)) {
        const auto f = fields(line);
        t.gpu_max_limit = std::max(t.gpu_max_limit, std::stod(f[4]));
        if (f[0] == job.dataset && f[1] == job.network && f[3] == job.optimizer)
            t.limits[std::stoll(f[2])][std::stod(f[4])] = {std::stod(f[5]), std::stod(f[6])};
    }
    std::ifstream train(kTrain);
    std::getline(train, line);
    while (std::getline(train, line)) {
        const auto f = fields(line);
        if (f[0] == job.dataset && f[1] == job.network && f[3] == job.optimizer &&
            std::abs(std::stod(f[6]) - job.target_metric) < 1e-9 && t.limits.contains(std::stoll(f[2])))
            t.epochs[std::stoll(f[2])].push_back(f[7] == "nan" ? std::nullopt : std::optional(std::stoll(f[7])));
    }
    return t;
}

const TraceJob& job_named(const std::string& dataset) {
    for (const auto& j : paper_jobs())
        if (j.dataset == dataset) return j;
    throw std::runtime_error("no job " + dataset);
}

struct Loaded {
    TrainTrace train;
    PowerTrace power;
};
Loaded read(const std::string& power_csv) {
    auto train = TrainTrace::read(kTrain);
    auto power = PowerTrace::read(power_csv);
    if (!train || !power) throw std::runtime_error("cannot read the traces");
    return {std::move(train).value(), std::move(power).value()};
}

// The ZeusCost selector's choice, written out here: the least
// eta*E + (1-eta)*max_limit*T per epoch, the higher limit on ties.
double argmin_limit(const std::map<double, Epoch>& limits, double eta) {
    const double max_limit = limits.rbegin()->first;
    double best = 0, best_cost = INFINITY;
    for (auto it = limits.rbegin(); it != limits.rend(); ++it) {
        const double cost = eta * it->second.time * it->second.power + (1 - eta) * max_limit * it->second.time;
        if (cost < best_cost) best_cost = cost, best = it->first;
    }
    return best;
}

PowerLimitChooser cheapest(double eta) {
    return [eta](std::int64_t, const LimitTable& limits) -> Result<double> { return cheapest_limit(limits, eta); };
}

TEST(BsoTraceReplay, BaselineIsTheDefaultBatchSizeAtTheMaximumLimit) {
    for (const auto& [dataset, csv] : {std::pair{"librispeech", kV100}, std::pair{"cifar100", kA40}}) {
        const auto& job = job_named(dataset);
        const Traces t = load(job, csv);
        const auto traces = read(csv);
        ReplayOptions options;
        options.recurrences = 2;
        const auto r = replay_recurring_job(job, traces.train, traces.power, "gpu", options, cheapest(0.5));
        ASSERT_TRUE(r) << r.error().describe();
        const std::int64_t b0 = std::min(job.default_batch_size, t.limits.rbegin()->first);
        EXPECT_EQ(r->job.default_batch_size, b0);
        double sum = 0;
        for (const auto& e : t.epochs.at(b0)) sum += static_cast<double>(e.value());
        const double epochs = sum / static_cast<double>(t.epochs.at(b0).size());
        const Epoch at_max = t.limits.at(b0).rbegin()->second;
        EXPECT_DOUBLE_EQ(r->baseline_epochs, epochs);
        EXPECT_DOUBLE_EQ(r->baseline_time_s, epochs * at_max.time);
        EXPECT_DOUBLE_EQ(r->baseline_energy_j, epochs * at_max.time * at_max.power);
        EXPECT_EQ(r->max_power_limit_w, t.gpu_max_limit);
        std::vector<std::int64_t> expected_sizes;
        for (const auto& [bs, runs] : t.epochs) expected_sizes.push_back(bs);
        EXPECT_EQ(r->batch_sizes, expected_sizes);
        // The paper's recurrence count when none is given: 2 |B| |P|.
        options.recurrences = 0;
        const auto paper = replay_recurring_job(job, traces.train, traces.power, "gpu", options, cheapest(0.5));
        ASSERT_TRUE(paper) << paper.error().describe();
        EXPECT_EQ(paper->recurrences,
                  static_cast<std::int64_t>(2 * expected_sizes.size() * t.limits.at(b0).size()));
    }
}

// Every run: the chooser's limit, profiling on the first run of a batch
// size, time and energy from the trace, a converged run stopping at one of
// its batch size's traced target epochs, and a stopped one exactly at the
// first epoch whose cost passed beta x the cheapest finished run (or at
// max_epochs); each recurrence ends with its one converged run.
TEST(BsoTraceReplay, EveryRunCostsWhatTheTraceSays) {
    for (const auto& [dataset, csv] : {std::pair{"librispeech", kV100}, std::pair{"cifar100", kA40},
                                       std::pair{"imagenet", kV100}}) {
        SCOPED_TRACE(dataset);
        const auto& job = job_named(dataset);
        const Traces t = load(job, csv);
        const auto traces = read(csv);
        ReplayOptions options;
        options.recurrences = 30;
        options.eta_knob = 0.5;
        options.beta_knob = 2.0;
        const auto r = replay_recurring_job(job, traces.train, traces.power, "gpu", options, cheapest(options.eta_knob));
        ASSERT_TRUE(r) << r.error().describe();
        const double max_power = t.gpu_max_limit;
        const auto cost = [&](double energy, double time) { return 0.5 * energy + 0.5 * max_power * time; };
        std::set<std::int64_t> seen;
        std::optional<double> min_cost;
        std::int64_t recurrence = 1;
        bool early_stopped = false;
        for (std::size_t i = 0; i < r->runs.size(); ++i) {
            const auto& run = r->runs[i];
            SCOPED_TRACE(::testing::Message() << "run " << i << " batch size " << run.batch_size);
            ASSERT_EQ(run.recurrence, recurrence);
            const auto& limits = t.limits.at(run.batch_size);
            EXPECT_EQ(run.power_limit_w, argmin_limit(limits, 0.5));
            EXPECT_EQ(run.profiled, seen.insert(run.batch_size).second);
            const Epoch steady = limits.at(run.power_limit_w);
            double first_time = steady.time, first_energy = steady.time * steady.power;
            if (run.profiled) {
                first_time = first_energy = 0;
                for (const auto& [w, e] : limits) {
                    first_time += e.time / static_cast<double>(limits.size());
                    first_energy += e.time * e.power / static_cast<double>(limits.size());
                }
            }
            const auto after = [&](std::int64_t epochs) {
                return std::pair{first_time + static_cast<double>(epochs - 1) * steady.time,
                                 first_energy + static_cast<double>(epochs - 1) * steady.time * steady.power};
            };
            const auto [time, energy] = after(run.epochs);
            EXPECT_NEAR(run.time_s, time, 1e-9 * time);
            EXPECT_NEAR(run.energy_j, energy, 1e-9 * energy);
            const double bound = min_cost ? 2.0 * *min_cost : INFINITY;
            if (run.epochs > 1) {
                const auto [t_before, e_before] = after(run.epochs - 1);
                EXPECT_LE(cost(e_before, t_before), bound) << "it should have stopped an epoch earlier";
            }
            const auto& runs = t.epochs.at(run.batch_size);
            if (run.converged) {
                EXPECT_LE(cost(energy, time), bound);
                EXPECT_NE(std::find(runs.begin(), runs.end(), std::optional(run.epochs)), runs.end());
                ++recurrence;
            } else if (run.epochs < job.max_epochs) {
                EXPECT_GT(cost(energy, time), bound) << "stopped early below the bound";
                early_stopped = true;
            }
            const double c = cost(run.energy_j, run.time_s);
            if (!min_cost || c < *min_cost) min_cost = c;
        }
        EXPECT_EQ(recurrence, options.recurrences + 1);
        // Pruning starts at the default batch size, then the next smaller one.
        ASSERT_GE(r->runs.size(), 2u);
        EXPECT_EQ(r->runs[0].batch_size, r->job.default_batch_size);
        EXPECT_TRUE(r->runs[0].converged);
        const auto below = std::prev(t.limits.find(r->job.default_batch_size));
        EXPECT_EQ(r->runs[1].batch_size, below->first);
        if (std::string(dataset) == "cifar100") {
            // Batch sizes 2048 and 4096 take 150-566 epochs against 100 at most:
            // pruning must meet one, and early stopping ends most of them.
            EXPECT_TRUE(early_stopped || std::any_of(r->runs.begin(), r->runs.end(), [&](const auto& run) {
                            return !run.converged && run.epochs == job.max_epochs;
                        }));
        }
    }
}

TEST(BsoTraceReplay, TheSameSeedReplaysTheSameRuns) {
    const auto& job = job_named("librispeech");
    const auto traces = read(kV100);
    ReplayOptions options;
    options.recurrences = 40;
    const auto a = replay_recurring_job(job, traces.train, traces.power, "gpu", options, cheapest(0.5));
    const auto b = replay_recurring_job(job, traces.train, traces.power, "gpu", options, cheapest(0.5));
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->runs.size(), b->runs.size());
    for (std::size_t i = 0; i < a->runs.size(); ++i) {
        EXPECT_EQ(a->runs[i].batch_size, b->runs[i].batch_size);
        EXPECT_EQ(a->runs[i].epochs, b->runs[i].epochs);
    }
}

TEST(BsoTraceReplay, AChooserErrorOrAnUntracedLimitIsAnError) {
    const auto& job = job_named("librispeech");
    const auto traces = read(kV100);
    ReplayOptions options;
    options.recurrences = 1;
    auto failing = [](std::int64_t, const LimitTable&) -> Result<double> {
        return Error{ErrorCode::NotSupported, "no simulator", "install it", 0};
    };
    auto r = replay_recurring_job(job, traces.train, traces.power, "gpu", options, failing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "no simulator");
    auto untraced = [](std::int64_t, const LimitTable&) -> Result<double> { return 137.5; };
    r = replay_recurring_job(job, traces.train, traces.power, "gpu", options, untraced);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("137.5 W"), std::string::npos) << r.error().message;
}

TEST(BsoTraceReplay, AWorkloadMissingFromATraceIsNamed) {
    const auto traces = read(kV100);
    TraceJob job = job_named("librispeech");
    job.optimizer = "sgd";
    auto r = replay_recurring_job(job, traces.train, traces.power, "V100", {}, cheapest(0.5));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("librispeech/deepspeech2 with sgd"), std::string::npos) << r.error().message;
    job = job_named("librispeech");
    job.target_metric = 41.5;  // not a traced target
    r = replay_recurring_job(job, traces.train, traces.power, "V100", {}, cheapest(0.5));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no runs of the default batch size"), std::string::npos) << r.error().message;
}

// Excel and Windows editors save with a UTF-8 byte-order mark and CRLF line ends.
TEST(BsoTraceReplay, TracesSavedOnWindowsReplayAsTheOriginals) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-bso-crlf-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto windows_copy = [&](const std::string& path) {
        std::ifstream in(path);
        const auto copy = dir / std::filesystem::path(path).filename();
        std::ofstream out(copy, std::ios::binary);
        out << "\xEF\xBB\xBF";
        for (std::string line; std::getline(in, line);) out << line << "\r\n";
        return copy.string();
    };
    auto train = TrainTrace::read(windows_copy(kTrain));
    auto power = PowerTrace::read(windows_copy(kV100));
    ASSERT_TRUE(train) << train.error().message;
    ASSERT_TRUE(power) << power.error().message;
    const auto& job = job_named("librispeech");
    const auto originals = read(kV100);
    ReplayOptions options;
    options.recurrences = 10;
    const auto a = replay_recurring_job(job, originals.train, originals.power, "gpu", options, cheapest(0.5));
    const auto b = replay_recurring_job(job, *train, *power, "gpu", options, cheapest(0.5));
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->runs.size(), b->runs.size());
    for (std::size_t i = 0; i < a->runs.size(); ++i) {
        EXPECT_EQ(a->runs[i].batch_size, b->runs[i].batch_size);
        EXPECT_EQ(a->runs[i].epochs, b->runs[i].epochs);
        EXPECT_EQ(a->runs[i].energy_j, b->runs[i].energy_j);
    }
    std::filesystem::remove_all(dir);
}

TEST(BsoTraceReplay, BadCsvFilesAreNamedWithTheLine) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-bso-trace-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    auto missing = TrainTrace::read((dir / "none.csv").string());
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("none.csv"), std::string::npos);
    auto header = PowerTrace::read(write("h.csv", "a,b,c\n"));
    ASSERT_FALSE(header);
    EXPECT_NE(header.error().message.find("line 1"), std::string::npos) << header.error().message;
    auto epoch = TrainTrace::read(write("e.csv",
                                        "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
                                        "d,n,8,adam,1e-3,1,0.5,4\n"
                                        "d,n,8,adam,1e-3,2,0.5,four\n"));
    ASSERT_FALSE(epoch);
    EXPECT_NE(epoch.error().message.find("line 3"), std::string::npos) << epoch.error().message;
    EXPECT_NE(epoch.error().message.find("'four'"), std::string::npos) << epoch.error().message;
    auto power = PowerTrace::read(write("p.csv",
                                        "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
                                        "d,n,8,adam,100,-2,50\n"));
    ASSERT_FALSE(power);
    EXPECT_NE(power.error().message.find("time_per_epoch"), std::string::npos) << power.error().message;
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::bso
