#include "zeus/simulation/pipeline_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "zeus/simulation/scratch_directory.hpp"
#include "zeus/simulation/simulator_api.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/lowtime/perseus_plan.hpp"
#include "zeus/perseus/pipeline_frequency.hpp"
#include "zeus/perseus/server.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::simulation {
namespace {

using lowtime::InstructionKind;

const char* name_of(InstructionKind kind) { return kind == InstructionKind::kForward ? "forward" : "backward"; }

Error failed(std::string message) { return Error{ErrorCode::Unknown, std::move(message), "", 0}; }

// Runs instructions on the simulated GPUs as constant loads on the virtual
// clock, stepping from completion to completion (at most 10 ms at a time, so
// a clock that drifts with temperature is followed). Work progresses at
// utilization * clock / max clock units per second, the simulator's rule.
class PipelineExecutor {
  public:
    PipelineExecutor(const Gpus& gpus, const SimulatorApi& api, double max_clock, double utilization)
        : gpus_(gpus), api_(api), max_clock_(max_clock), utilization_(utilization) {}

    using Hook = std::function<Status(std::size_t stage, const char* name)>;

    struct Run {
        double time_s = 0, energy_j = 0;
    };

    // One 1F1B iteration: `orders[s]` on GPU s; `units(s, kind)`; `begin` before each instruction.
    Result<Run> iteration(const std::vector<std::vector<lowtime::Instruction>>& orders,
                          const std::function<double(std::size_t, InstructionKind)>& units, const Hook& begin) {
        const std::size_t stages = orders.size();
        std::size_t microbatches = 0;
        for (const auto& order : orders)
            for (const auto& ins : order) microbatches = std::max(microbatches, ins.microbatch + 1);
        std::vector<std::vector<bool>> forward_done(stages, std::vector<bool>(microbatches)),
            backward_done(stages, std::vector<bool>(microbatches));
        struct Running {
            bool active = false;
            double remaining = 0, total = 0;
            int load = -1;
        };
        std::vector<Running> running(stages);
        std::vector<std::size_t> next(stages, 0);
        auto start = snapshot();
        if (!start) return start.error();
        for (;;) {
            std::size_t active = 0;
            for (std::size_t s = 0; s < stages; ++s) {
                if (!running[s].active && next[s] < orders[s].size()) {
                    const auto& ins = orders[s][next[s]];
                    const bool ready = ins.kind == InstructionKind::kForward
                                           ? (s == 0 || forward_done[s - 1][ins.microbatch])
                                           : (s + 1 == stages || backward_done[s + 1][ins.microbatch]);
                    if (ready) {
                        if (auto hooked = begin(s, name_of(ins.kind)); !hooked) return hooked.error();
                        running[s].total = running[s].remaining = units(s, ins.kind);
                        if (api_.load_begin(gpu(s), utilization_, &running[s].load) != 0)
                            return api_.failure("starting an instruction's load");
                        running[s].active = true;
                    }
                }
                active += running[s].active ? 1 : 0;
            }
            if (active == 0) {
                for (std::size_t s = 0; s < stages; ++s)
                    if (next[s] < orders[s].size()) return failed("the pipeline deadlocked (a bug in the 1F1B order)");
                break;
            }
            std::vector<double> rate(stages, 0.0);
            double step = 0.010;
            for (std::size_t s = 0; s < stages; ++s) {
                if (!running[s].active) continue;
                double mhz = 0;
                if (api_.clock_mhz(gpu(s), &mhz) != 0) return api_.failure("reading the clock");
                rate[s] = utilization_ * mhz / max_clock_;
                step = std::min(step, running[s].remaining / rate[s]);
            }
            if (api_.advance(step) != 0) return api_.failure("advancing the virtual clock");
            for (std::size_t s = 0; s < stages; ++s) {
                if (!running[s].active) continue;
                running[s].remaining -= rate[s] * step;
                if (running[s].remaining > 1e-9 * running[s].total) continue;
                if (api_.load_end(running[s].load) != 0) return api_.failure("ending an instruction's load");
                running[s].active = false;
                const auto& ins = orders[s][next[s]++];
                (ins.kind == InstructionKind::kForward ? forward_done : backward_done)[s][ins.microbatch] = true;
            }
        }
        auto end = snapshot();
        if (!end) return end.error();
        Run run{end->first - start->first, 0};
        for (std::size_t s = 0; s < stages; ++s) run.energy_j += end->second[s + offset_] - start->second[s + offset_];
        return run;
    }

    // One instruction alone on GPU `stage`: its time and that GPU's energy.
    Result<Run> single(std::size_t stage, InstructionKind kind, double units) {
        // A one-stage pipeline of one instruction, placed on GPU `stage`.
        const std::vector<std::vector<lowtime::Instruction>> alone{{lowtime::Instruction{kind, 0, 0}}};
        offset_ = stage;
        auto run = iteration(alone, [units](std::size_t, InstructionKind) { return units; },
                             [](std::size_t, const char*) { return Status{}; });
        offset_ = 0;
        return run;
    }

    Result<double> idle_power(std::size_t stages, double seconds) {
        auto start = snapshot();
        if (!start) return start.error();
        if (api_.advance(seconds) != 0) return api_.failure("advancing the virtual clock");
        auto end = snapshot();
        if (!end) return end.error();
        double joules = 0;
        for (std::size_t s = 0; s < stages; ++s) joules += end->second[s] - start->second[s];
        return joules / seconds / static_cast<double>(stages);
    }

  private:
    unsigned gpu(std::size_t stage) const { return gpus_[stage + offset_].identity().physical_index; }

    // (virtual now, each GPU's ground-truth energy)
    Result<std::pair<double, std::vector<double>>> snapshot() {
        std::pair<double, std::vector<double>> out;
        if (api_.now(&out.first) != 0) return api_.failure("reading the virtual clock");
        for (std::size_t g = 0; g < gpus_.size(); ++g) {
            double joules = 0;
            if (api_.ground_truth_energy(gpus_[g].identity().physical_index, &joules) != 0)
                return api_.failure("reading the ground-truth energy");
            out.second.push_back(joules);
        }
        return out;
    }

    const Gpus& gpus_;
    const SimulatorApi& api_;
    double max_clock_;
    double utilization_;
    std::size_t offset_ = 0;
};

// The PFO server on a loopback port of this process, for the run.
class LocalPfoServer {
  public:
    explicit LocalPfoServer(const std::filesystem::path& solution) : server_(options(solution)) {}
    Result<std::string> start() {
        const auto port = server_.listen_tcp("127.0.0.1:0");
        if (!port) return failed("could not listen on a loopback port for the PFO server");
        server_.start();
        return fmt::format("http://127.0.0.1:{}", *port);
    }

  private:
    static perseus::ServerOptions options(const std::filesystem::path& solution) {
        perseus::ServerOptions options;
        options.settings.solution_path = solution;
        options.settings.dump_data = false;
        options.name = "zeus-perseus-simulate";
        options.threads = 2;
        return options;
    }
    perseus::Server server_;
};

using InstructionOrders = std::vector<std::vector<lowtime::Instruction>>;
using UnitsFunction = std::function<double(std::size_t, InstructionKind)>;
using Clients = std::vector<std::unique_ptr<perseus::PipelineFrequencyOptimizer>>;

// Work of one instruction: later stages carry up to `imbalance` more, and a
// backward pass twice a forward one.
UnitsFunction instruction_units(const PipelineSimulationPlan& plan) {
    return [&plan](std::size_t stage, InstructionKind kind) {
        const double scale =
            plan.stages > 1 ? 1.0 + plan.imbalance * static_cast<double>(stage) / static_cast<double>(plan.stages - 1)
                            : 1.0;
        return plan.forward_units * scale * (kind == InstructionKind::kBackward ? 2.0 : 1.0);
    };
}

Result<std::vector<long long>> graphics_clocks_descending(const Gpu& gpu) {
    auto clocks = gpu.supported_graphics_clocks();
    if (!clocks || clocks->empty()) return clocks ? failed("the simulated GPU lists no graphics clocks") : clocks.error();
    std::vector<long long> all;
    for (const auto c : *clocks) all.push_back(c.count());
    std::sort(all.begin(), all.end(), std::greater<>());
    return all;
}

// Every `frequency_stride`-th clock from the top, down to `min_frequency_fraction` of the maximum.
std::vector<long long> frequencies_to_profile(const std::vector<long long>& descending,
                                              const PipelineSimulationPlan& plan) {
    std::vector<long long> frequencies;
    const long long max_clock = descending.front();
    for (std::size_t i = 0; i < descending.size(); i += std::max<std::size_t>(1, plan.frequency_stride))
        if (static_cast<double>(descending[i]) >= plan.min_frequency_fraction * static_cast<double>(max_clock))
            frequencies.push_back(descending[i]);
    return frequencies;
}

// Every stage's instructions at every frequency (descending, as the original scans).
Result<lowtime::InstructionProfile> profile_instructions(const Gpus& gpus, PipelineExecutor& executor,
                                                         const std::vector<long long>& frequencies,
                                                         const UnitsFunction& units, std::size_t stages) {
    lowtime::InstructionProfile profile;
    profile.stages = stages;
    for (std::size_t s = 0; s < stages; ++s) {
        for (const auto f : frequencies) {
            if (auto set = gpus[s].set_gpu_locked_clocks(Megahertz(f), Megahertz(f)); !set) return set.error();
            for (const auto kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
                auto run = executor.single(s, kind, units(s, kind));
                if (!run) return run.error();
                profile.measurements[{s, kind}].push_back({f, run->time_s, run->energy_j});
            }
        }
        if (auto reset = gpus[s].reset_gpu_locked_clocks(); !reset) return reset.error();
    }
    return profile;
}

// Solves the profile, serves the fastest frontier point (it removes intrinsic
// bloat without slowing the iteration) and writes its schedule to `solution`.
Status solve_schedule(const lowtime::InstructionProfile& profile, const std::filesystem::path& solution,
                      PipelineSimulationReport& report) {
    lowtime::PerseusOptions solve;
    solve.microbatches = report.plan.microbatches;
    solve.unit_time = report.plan.unit_time;
    solve.p2p_power = report.p2p_power_w;
    lowtime::PerseusPlan solved;
    try {
        solved = lowtime::plan_pipeline_frequencies(profile, solve);
    } catch (const std::exception& e) {
        return failed(std::string("solving the simulated profile: ") + e.what());
    }
    const auto& points = solved.frontier.points();
    report.frontier_points = points.size();
    report.chosen_point = points.size() - 1;
    report.predicted_time_s = points.back().real_time;
    report.predicted_energy_j = solved.energy_with_p2p(report.chosen_point);
    std::ofstream(solution) << lowtime::schedule_json(solved, report.chosen_point);
    return {};
}

// Runs one warm-up and `iterations` measured 1F1B iterations and averages the measured ones.
struct IterationMeasurement {
    PipelineExecutor& executor;
    InstructionOrders orders;
    UnitsFunction units;
    std::size_t iterations;

    Result<MeasuredRun> measure(const PipelineExecutor::Hook& begin, const std::function<void()>& step_end,
                                const std::function<std::size_t()>& changes) const {
        MeasuredRun measured;
        for (std::size_t i = 0; i <= iterations; ++i) {
            const std::size_t before = changes();
            auto run = executor.iteration(orders, units, begin);
            if (!run) return run.error();
            step_end();
            if (i == 0) continue;  // warm-up
            measured.iteration_time_s += run->time_s / static_cast<double>(iterations);
            measured.iteration_energy_j += run->energy_j / static_cast<double>(iterations);
            measured.clock_changes += changes() - before;
        }
        measured.clock_changes /= std::max<std::size_t>(1, iterations);
        return measured;
    }
};

Result<MeasuredRun> measure_all_at_max_clock(const Gpus& gpus, long long max_clock, std::size_t stages,
                                             const IterationMeasurement& iterations) {
    for (std::size_t s = 0; s < stages; ++s)
        if (auto set = gpus[s].set_gpu_locked_clocks(Megahertz(max_clock), Megahertz(max_clock)); !set) return set.error();
    auto all_max =
        iterations.measure([](std::size_t, const char*) { return Status{}; }, [] {}, [] { return std::size_t{0}; });
    if (!all_max) return all_max.error();
    for (std::size_t s = 0; s < stages; ++s) (void)gpus[s].reset_gpu_locked_clocks();
    return all_max;
}

// One PFO client per stage, created at once on threads of their own as the
// ranks of a job would be: rank 0 registers the job and shares its id.
Result<Clients> create_clients(const Gpus& gpus, const std::string& url, std::size_t stages) {
    std::promise<std::string> job_id;
    std::shared_future<std::string> shared = job_id.get_future().share();
    Clients clients(stages);
    std::vector<std::optional<Error>> errors(stages);
    {
        std::vector<std::thread> ranks;
        for (std::size_t s = 0; s < stages; ++s) {
            ranks.emplace_back([&, s] {
                perseus::PipelineFrequencyOptions o;
                o.server_url = url;
                o.rank = o.pp_rank = s;
                o.pp_degree = o.world_size = stages;
                o.job_metadata = "simulated";
                o.share_job_id = [&](std::optional<std::string> id) -> Result<std::string> {
                    if (id) job_id.set_value(*id);
                    return shared.get();
                };
                auto created = perseus::PipelineFrequencyOptimizer::create(gpus[s], o);
                if (created) clients[s] = std::move(created).value();
                else errors[s] = created.error();
                if (!created && s == 0) job_id.set_value("");  // release the others
            });
        }
        for (auto& t : ranks) t.join();
    }
    for (const auto& e : errors)
        if (e) return *e;
    return clients;
}

// Each stage's client runs the served schedule, changing clocks at instruction boundaries.
Result<MeasuredRun> measure_perseus(Clients& clients, const IterationMeasurement& iterations) {
    return iterations.measure([&](std::size_t s, const char* name) { return clients[s]->on_instruction_begin(name); },
                              [&] {
                                  for (auto& c : clients) (void)c->on_step_end();
                              },
                              [&] {
                                  std::size_t n = 0;
                                  for (auto& c : clients) n += c->frequency_controller().changes();
                                  return n;
                              });
}

}  // namespace

Result<PipelineSimulationReport> simulate_pipeline(const PipelineSimulationPlan& plan) {
    if (plan.stages < 1 || plan.microbatches < 1)
        return failed("a pipeline needs at least one stage and one microbatch");
    PipelineSimulationReport report;
    report.plan = plan;
    auto scratch = ScratchDirectory::create("zeus-perseus-simulate");
    if (!scratch) return scratch.error();
    auto opened = open_private_simulator(
        scratch->path(), fmt::format(R"({{"clock": "virtual", "gpus": [{{"model": "{}", "count": {}}}]}})",
                                     plan.gpu_model, plan.stages));
    if (!opened) return opened.error();
    const Gpus gpus = std::move(opened).value();
    if (gpus.size() != plan.stages)
        return failed(fmt::format("the simulator has {} GPUs, not {}", gpus.size(), plan.stages));
    auto api = SimulatorApi::open(gpus);
    if (!api) return api.error();

    auto clocks = graphics_clocks_descending(gpus[0]);
    if (!clocks) return clocks.error();
    const long long max_clock = clocks->front();
    report.frequencies = frequencies_to_profile(*clocks, plan);
    const UnitsFunction units = instruction_units(plan);
    PipelineExecutor executor(gpus, *api, static_cast<double>(max_clock), plan.utilization);

    // 1. Profile.
    auto profile = profile_instructions(gpus, executor, report.frequencies, units, plan.stages);
    if (!profile) return profile.error();
    auto idle = executor.idle_power(plan.stages, 1.0);
    if (!idle) return idle.error();
    report.p2p_power_w = *idle;

    // 2. Solve.
    const auto solution = scratch->path() / "schedule.json";
    if (auto solved = solve_schedule(*profile, solution, report); !solved) return solved.error();

    InstructionOrders orders;
    for (std::size_t s = 0; s < plan.stages; ++s)
        orders.push_back(lowtime::synchronous_1f1b_order(plan.stages, plan.microbatches, s));
    const IterationMeasurement iterations{executor, std::move(orders), units, plan.iterations};

    // 3. All stages at the maximum clock.
    auto all_max = measure_all_at_max_clock(gpus, max_clock, plan.stages, iterations);
    if (!all_max) return all_max.error();
    report.all_max = *all_max;

    // 4. Serve the schedule; every stage's client fetches it and runs it.
    LocalPfoServer server(solution);
    auto url = server.start();
    if (!url) return url.error();
    auto clients = create_clients(gpus, *url, plan.stages);
    if (!clients) return clients.error();
    Clients& stage_clients = clients.value();
    report.job_id = stage_clients[0]->job_id();
    for (const auto& c : stage_clients) {
        std::vector<std::pair<std::string, long long>> stage;
        for (const auto& [name, f] : c->schedule()) stage.emplace_back(name, f);
        report.schedule.push_back(std::move(stage));
    }
    auto perseus = measure_perseus(stage_clients, iterations);
    if (!perseus) return perseus.error();
    report.perseus = *perseus;
    return report;
}

std::string PipelineSimulationReport::to_json() const {
    const auto run = [](const MeasuredRun& r) {
        return nlohmann::ordered_json{{"iteration_time_s", r.iteration_time_s},
                                      {"iteration_energy_j", r.iteration_energy_j},
                                      {"clock_changes_per_iteration", r.clock_changes}};
    };
    nlohmann::ordered_json doc{
        {"stages", plan.stages},
        {"microbatches", plan.microbatches},
        {"gpu_model", plan.gpu_model},
        {"forward_units", plan.forward_units},
        {"imbalance", plan.imbalance},
        {"frequencies_mhz", frequencies},
        {"p2p_power_w", p2p_power_w},
        {"frontier_points", frontier_points},
        {"chosen_point", chosen_point},
        {"predicted", {{"iteration_time_s", predicted_time_s}, {"iteration_energy_j", predicted_energy_j}}},
        {"job_id", job_id},
        {"schedule", schedule},
        {"all_max_frequency", run(all_max)},
        {"perseus", run(perseus)},
        {"energy_saving", 1.0 - perseus.iteration_energy_j / all_max.iteration_energy_j},
        {"slowdown", perseus.iteration_time_s / all_max.iteration_time_s - 1.0}};
    return json_text(doc, 2) + "\n";
}

std::string PipelineSimulationReport::to_text() const {
    return fmt::format(
        "Perseus on {} simulated {} GPUs ({} microbatches, 1F1B; stage work x1..x{:.2f}):\n"
        "  profiled {} clocks ({}..{} MHz); P2P blocking power {:.1f} W\n"
        "  frontier: {} points; served the fastest (predicted {:.4f} s, {:.2f} J)\n"
        "  all stages at {} MHz: {:.4f} s, {:.2f} J per iteration\n"
        "  Perseus schedule:     {:.4f} s, {:.2f} J per iteration ({} clock changes)\n"
        "  energy saving {:.1f} %, time change {:+.2f} %\n",
        plan.stages, plan.gpu_model, plan.microbatches, 1.0 + plan.imbalance, frequencies.size(), frequencies.back(),
        frequencies.front(), p2p_power_w, frontier_points, predicted_time_s, predicted_energy_j, frequencies.front(),
        all_max.iteration_time_s, all_max.iteration_energy_j, perseus.iteration_time_s, perseus.iteration_energy_j,
        perseus.clock_changes, 100.0 * (1.0 - perseus.iteration_energy_j / all_max.iteration_energy_j),
        100.0 * (perseus.iteration_time_s / all_max.iteration_time_s - 1.0));
}

}  // namespace zeus::simulation
