// `zeus perseus solve`: Perseus's optimization step. From an instruction
// profile CSV and the P2P blocking power, the whole iteration-time / energy
// frontier of a 1F1B pipeline and a frequency schedule per point
// (docs/perseus.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "commands.hpp"
#include "option_checks.hpp"
#include "perseus_output.hpp"
#include "solve_progress.hpp"
#include "zeus/simulation/pipeline_simulation.hpp"
#include "zeus/platform/read_user_file.hpp"
#include "zeus/lowtime/instruction_profile.hpp"
#include "zeus/lowtime/perseus_plan.hpp"

namespace zeus::cli {
namespace {

struct SolveFlags {
    std::string profile;
    std::string output_dir;
    std::string cost_models;
    double p2p_power = 0.0;
    double unit_time = 0.001;
    double noise_factor = 0.95;
    std::size_t microbatches = 0;
    bool allow_differing_frequencies = false;
    bool progress = false;
    std::optional<std::size_t> schedules;  // unset: every point's files
};

// Which frontier points (1-based; 0 is the start, never written) get
// schedule files: all, or at most `cap` spread evenly from the slowest to
// the fastest, the fastest always among them.
std::vector<std::size_t> points_to_write(std::size_t point_count, std::optional<std::size_t> cap) {
    std::vector<std::size_t> out;
    if (point_count < 2) return out;
    const std::size_t last = point_count - 1;
    if (!cap || *cap >= last) {
        for (std::size_t i = 1; i <= last; ++i) out.push_back(i);
        return out;
    }
    for (std::size_t k = 0; k < *cap; ++k) {
        const std::size_t i = *cap == 1 ? last : 1 + (k * (last - 1) + (*cap - 1) / 2) / (*cap - 1);
        if (out.empty() || out.back() != i) out.push_back(i);
    }
    return out;
}

// A bad input file is a usage error (exit 2), as a bad flag is.
std::string read_file(const std::string& path, const char* what, const char* flag) {
    auto text = read_user_file(path, {what, flag});
    if (!text) throw std::invalid_argument(text.error().describe());
    return std::move(text).value();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}' (disk full or no permission?)", path.string()));
}

// MemAvailable from /proc/meminfo in bytes; 0 (no limit) where unknown.
std::size_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

// A run's files name each other (frontier.json lists its schedules), so an
// earlier run's schedules left beside them would be served as this run's.
void refuse_non_empty_directory(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return;
    if (!std::filesystem::is_directory(dir, ec))
        throw std::invalid_argument(fmt::format("--output-dir '{}' exists and is not a directory", dir.string()));
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) throw std::invalid_argument(fmt::format("cannot list --output-dir '{}': {}", dir.string(), ec.message()));
    if (it != std::filesystem::directory_iterator())
        throw std::invalid_argument(fmt::format(
            "--output-dir '{}' is not empty (it holds '{}'): name a new or empty directory, so that no earlier "
            "run's schedules are mistaken for this run's",
            dir.string(), it->path().filename().string()));
}

int run_solve(const SolveFlags& f) {
    try {
        std::istringstream csv(read_file(f.profile, "instruction profile", "--profile"));
        const auto profile = lowtime::read_instruction_profile(csv, f.profile, {f.allow_differing_frequencies});
        lowtime::PerseusOptions options;
        options.microbatches = f.microbatches;
        options.unit_time = f.unit_time;
        options.p2p_power = f.p2p_power;
        options.noise_factor = f.noise_factor;
        options.memory_budget_bytes = available_memory_bytes();
        if (!f.cost_models.empty())
            options.cost_model_overrides = parse_cost_models_json(read_file(f.cost_models, "cost-model file", "--cost-models"), f.cost_models);
        const std::filesystem::path dir(f.output_dir);
        refuse_non_empty_directory(dir);
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) throw std::runtime_error(fmt::format("cannot create '{}': {}", f.output_dir, ec.message()));
        SolveProgress progress(f.progress || ::isatty(STDERR_FILENO) == 1);
        progress.attach(options.solver);
        const auto started = std::chrono::steady_clock::now();
        const auto plan = lowtime::plan_pipeline_frequencies(profile, options);
        const std::chrono::duration<double> solve_time = std::chrono::steady_clock::now() - started;
        progress.finish();
        for (const auto& [key, model] : plan.models)
            if (model.poor_fit)
                std::cerr << fmt::format("zeus: perseus solve: warning: stage {} {}: the cost model fits poorly (RMS "
                                         "error {:.4g} J, over 10% of the options' energy range); check that profile's "
                                         "rows, or pass coefficients with --cost-models\n",
                                         key.first, key.second == lowtime::InstructionKind::kForward ? "forward" : "backward",
                                         model.rms_error);
        const auto& points = plan.frontier.points();
        const auto written = points_to_write(points.size(), f.schedules);
        for (const std::size_t i : written) {
            write_file(dir / fmt::format("schedule_{:05d}.json", i - 1), lowtime::schedule_json(plan, i));
            write_file(dir / fmt::format("freqs_pipeline_{:05d}.py", i - 1), freqs_pipeline_python(plan, i));
        }
        write_file(dir / "frontier.svg", frontier_svg(plan));
        write_file(dir / "frontier.json", frontier_json(plan, written));
        std::cerr << fmt::format("zeus: perseus solve: {} frontier points, {:.4f} s ({:.6g} J) to {:.4f} s ({:.6g} J), "
                                 "stopped: {}; fit and solve took {:.3f} s; wrote {}\n",
                                 points.size(), points.front().real_time, plan.energy_with_p2p(0), points.back().real_time,
                                 plan.energy_with_p2p(points.size() - 1), lowtime::to_string(plan.frontier.stop_reason()),
                                 solve_time.count(), (dir / "frontier.json").string());
        return 0;
    } catch (const std::invalid_argument& e) {
        std::cerr << "zeus: perseus solve: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "zeus: perseus solve: out of memory while solving; try fewer --microbatches, a coarser "
                     "--unit-time or a smaller profile\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "zeus: perseus solve: " << e.what() << "\n";
        return 1;
    }
}

struct SimulateFlags {
    simulation::PipelineSimulationPlan plan;
    std::string format = "text";
};

int run_simulate(const SimulateFlags& f) {
    auto report = simulation::simulate_pipeline(f.plan);
    if (!report) {
        std::cerr << "zeus: perseus simulate: " << report.error().describe() << "\n";
        return 1;
    }
    std::cout << (f.format == "json" ? report->to_json() : report->to_text()) << std::flush;
    return 0;
}

}  // namespace

Command add_perseus(CLI::App& parent) {
    auto* app = parent.add_subcommand("perseus", "Perseus pipeline-frequency optimization: solve, simulate");
    app->require_subcommand(1);
    auto solve = std::make_shared<SolveFlags>();
    auto* s = app->add_subcommand("solve", "the time-energy frontier and per-stage frequency schedules of a 1F1B pipeline");
    s->add_option("--profile", solve->profile, "instruction profile CSV (stage,instruction,frequency,time,energy)")->required();
    s->add_option("--p2p-power", solve->p2p_power, "W a GPU draws while blocked on P2P communication")
        ->required()
        ->check(finite_number(0.0, 1e5, "W"));
    s->add_option("--microbatches", solve->microbatches, "microbatches per iteration")->required()->check(whole_number(1, 1 << 20));
    s->add_option("--output-dir", solve->output_dir, "directory for frontier.json, schedules, exports and frontier.svg")->required();
    s->add_option("--unit-time", solve->unit_time, "s per time quantum (one solver iteration)")
        ->check(finite_number(1e-9, 1e3, "s"))
        ->capture_default_str();
    s->add_option("--noise-factor", solve->noise_factor, "slack of the second Pareto pass when <= 3 options survive")
        ->check(finite_number(0.01, 1.0, ""))
        ->capture_default_str();
    s->add_option("--cost-models", solve->cost_models,
                  "JSON {\"STAGE,forward|backward\": {a,b,c}} (or a frontier.json) to use instead of fitting");
    s->add_option("--schedules", solve->schedules,
                  "write the schedule files (JSON and .py) of at most N frontier points, spread evenly from the "
                  "slowest to the fastest (always written); 0: none; default: every point (one pair of files each)")
        ->check(whole_number(0, 1LL << 40));
    s->add_flag("--progress", solve->progress,
                "show progress and an ETA on stderr even when it is not a terminal (on a terminal it is shown anyway)");
    s->add_flag("--allow-differing-frequencies", solve->allow_differing_frequencies,
                "accept instructions profiled at different frequency sets");
    auto simulate = std::make_shared<SimulateFlags>();
    auto* sim = app->add_subcommand(
        "simulate", "Perseus end to end on simulated GPUs (one per stage): profile, solve, serve, run, against all-max clocks");
    sim->add_option("--stages", simulate->plan.stages, "pipeline stages (simulated GPUs)")->check(whole_number(1, 64))->capture_default_str();
    sim->add_option("--microbatches", simulate->plan.microbatches, "microbatches per iteration")
        ->check(whole_number(1, 4096))
        ->capture_default_str();
    sim->add_option("--gpu-model", simulate->plan.gpu_model, "simulator preset")->capture_default_str();
    sim->add_option("--forward-units", simulate->plan.forward_units,
                    "first stage's forward, in s at the maximum clock (a backward is twice its forward)")
        ->check(finite_number(1e-4, 10.0, "s"))
        ->capture_default_str();
    sim->add_option("--imbalance", simulate->plan.imbalance, "the last stage does (1 + this) times the first's work")
        ->check(finite_number(0.0, 10.0, ""))
        ->capture_default_str();
    sim->add_option("--frequency-stride", simulate->plan.frequency_stride, "profile every Nth supported clock")
        ->check(whole_number(1, 100))
        ->capture_default_str();
    sim->add_option("--min-frequency", simulate->plan.min_frequency_fraction, "lowest profiled clock, as a fraction of the maximum")
        ->check(finite_number(0.05, 1.0, ""))
        ->capture_default_str();
    sim->add_option("--iterations", simulate->plan.iterations, "measured iterations per run (after one warm-up)")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
    sim->add_option("--format", simulate->format, "text or json")->check(one_of({"text", "json"}))->capture_default_str();
    return [app, s, solve, sim, simulate] {
        if (sim->parsed()) return run_simulate(*simulate);
        if (s->parsed()) return run_solve(*solve);
        std::cerr << app->help();
        return 2;
    };
}

}  // namespace zeus::cli
