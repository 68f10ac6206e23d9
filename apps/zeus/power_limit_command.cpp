// `zeus power-limit report`: what each optimum selector picks from a saved
// profile or a recorded window log, and what it saves.
// `zeus power-limit simulate`: the optimizer on a simulated GPU following a
// measured power trace (docs/power-limit-optimizer.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>

#include "commands.hpp"
#include "option_checks.hpp"
#include "zeus/simulation/simulator_api.hpp"
#include "zeus/simulation/trace_simulation.hpp"
#include "charged_windows.hpp"
#include "zeus/carbon/carbon_aware_power_limit.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/optimizer/power_limit_profile.hpp"
#include "zeus/optimizer/power_limit_report.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::cli {
namespace {

struct SelectorFlags {
    std::vector<std::string> specs;
    std::string format = "text";
    ChargeOptions carbon;  // the carbon selector's intensity (--carbon-*)
};

// The intensity for the carbon selector: the current UTC hour's from the
// --carbon-* source; null when none was given (a carbon spec then says so).
Result<carbon::IntensityNow> intensity_now(const SelectorFlags& f) {
    if (f.carbon.carbon_zone.empty() && !f.carbon.carbon_intensity && f.carbon.carbon_file.empty()) {
        if (f.carbon.carbon_estimate) {
            return Error{ErrorCode::InvalidArgument, "--carbon-estimate only qualifies a carbon intensity source",
                         "add --carbon-zone, --carbon-intensity or --carbon-file", 0};
        }
        return carbon::IntensityNow{};
    }
    auto provider = intensity_provider(f.carbon);
    if (!provider) return provider.error();
    return carbon::intensity_now(std::move(provider).value());
}

Result<optimizer::SelectorPtr> parse_selector(const std::string& spec, const carbon::IntensityNow& intensity) {
    return carbon::parse_selector_with_carbon(spec, intensity);
}

Result<std::vector<optimizer::SelectorPtr>> parse_selectors(const std::vector<std::string>& specs,
                                                            const carbon::IntensityNow& intensity) {
    if (specs.empty()) return optimizer::standard_selectors();
    std::vector<optimizer::SelectorPtr> selectors;
    for (const auto& spec : specs) {
        auto s = parse_selector(spec, intensity);
        if (!s) return s.error();
        selectors.push_back(std::move(s).value());
    }
    return selectors;
}

int fail(std::string_view command, const Error& error, int code) {
    std::cerr << "zeus: power-limit " << command << ": " << error.describe() << "\n";
    return code;
}

void print(const optimizer::PowerLimitReport& report, const std::string& format) {
    std::cout << (format == "json" ? report.to_json() + "\n" : report.to_string()) << std::flush;
}

// ---- report ----

struct ReportFlags {
    std::string profile;
    std::string log;
    std::optional<int> world_size;
    std::optional<std::size_t> steps;
    SelectorFlags selectors;
};

int run_report(const ReportFlags& f) {
    if (f.profile.empty() == f.log.empty()) {
        return fail("report", Error{ErrorCode::InvalidArgument, "give exactly one of --profile and --log",
                                    "--profile FILE for a saved profile, --log FILE for an energy-window CSV log", 0},
                    2);
    }
    auto intensity = intensity_now(f.selectors);
    if (!intensity) return fail("report", intensity.error(), 2);
    auto selectors = parse_selectors(f.selectors.specs, *intensity);
    if (!selectors) return fail("report", selectors.error(), 2);
    std::vector<optimizer::PowerLimitMeasurement> measurements;
    int world_size = 1;
    std::optional<std::size_t> steps = f.steps;
    if (!f.profile.empty()) {
        auto profile = optimizer::load_power_limit_profile(f.profile);
        if (!profile) return fail("report", profile.error(), 2);
        measurements = std::move(profile->measurements);
        if (!steps) steps = profile->profile_steps;
    } else {
        auto logged = optimizer::read_power_limit_log(f.log);
        if (!logged) return fail("report", logged.error(), 2);
        measurements = std::move(logged->measurements);
        world_size = static_cast<int>(logged->gpu_count);
    }
    if (f.world_size) world_size = *f.world_size;
    auto report = optimizer::make_power_limit_report(measurements, *selectors, {world_size}, steps);
    if (!report) return fail("report", report.error(), 1);
    print(*report, f.selectors.format);
    return 0;
}

// ---- simulate ----

struct SimulateFlags {
    std::string trace;
    std::string workload;  // dataset/network
    std::optional<int> batch_size;
    std::string optimizer;
    bool all = false;
    std::string gpu_model;
    unsigned gpus = 1;
    std::size_t wait_steps = 1;
    std::size_t warmup_steps = 10;
    std::size_t profile_steps = 40;
    double pl_step = 0;
    std::size_t steps_per_epoch = 100;
    std::string selector = "zeus-cost";
    std::string profile_path;
    SelectorFlags selectors;
};

Result<std::vector<simulation::TraceWorkload>> chosen_workloads(const SimulateFlags& f) {
    auto all = simulation::read_trace_workloads(f.trace);
    if (!all) return all.error();
    if (f.all) {
        if (!f.profile_path.empty()) {
            return Error{ErrorCode::InvalidArgument, "--all runs several workloads; --profile-path saves one profile",
                         "choose one workload with --workload and --batch-size to save its profile", 0};
        }
        if (!f.workload.empty() || f.batch_size) {
            return Error{ErrorCode::InvalidArgument, "--all runs every workload of the trace; it takes no --workload",
                         "drop --workload/--batch-size, or drop --all", 0};
        }
        return all;
    }
    if (f.workload.empty() || !f.batch_size) {
        return Error{ErrorCode::InvalidArgument, "no workload chosen",
                     "give --workload DATASET/NETWORK and --batch-size N (add --optimizer NAME when several "
                     "optimizers were traced), or --all",
                     0};
    }
    std::vector<simulation::TraceWorkload> matches;
    std::vector<std::string> known;
    for (const auto& w : *all) {
        const std::string name = w.dataset + "/" + w.network;
        if (known.empty() || known.back() != name) known.push_back(name);
        if (name == f.workload && w.batch_size == *f.batch_size && (f.optimizer.empty() || w.optimizer == f.optimizer)) {
            matches.push_back(w);
        }
    }
    if (matches.empty()) {
        return Error{ErrorCode::NotFound,
                     fmt::format("{} has no rows for {} at batch size {}{}", f.trace, f.workload, *f.batch_size,
                                 f.optimizer.empty() ? "" : " with " + f.optimizer),
                     fmt::format("workloads in this trace: {}", fmt::join(known, ", ")), 0};
    }
    if (matches.size() > 1) {
        std::vector<std::string> names;
        for (const auto& m : matches) names.push_back(m.optimizer);
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("{} at batch size {} was traced with several optimizers", f.workload, *f.batch_size),
                     fmt::format("choose one with --optimizer ({})", fmt::join(names, ", ")), 0};
    }
    return matches;
}

std::string saving_cell(const optimizer::SelectorChoice& c) {
    return fmt::format("{:g} W ({:+.1f}% E, {:+.1f}% T)", static_cast<double>(c.power_limit.count()) / 1000.0,
                       -c.energy_saving * 100.0 + 0.0, c.slowdown * 100.0 + 0.0);  // + 0.0: no "-0.0%"
}

// Every workload fitted to the preset's range before anything runs; what a
// fit changed is a warning (one line for the first and a count where many did).
Result<std::vector<simulation::TraceWorkload>> fit_workloads(const std::vector<simulation::TraceWorkload>& workloads,
                                                             const simulation::SimulatorPreset& preset,
                                                             const std::vector<simulation::SimulatorPreset>& presets) {
    std::vector<simulation::TraceWorkload> fitted;
    std::vector<std::string> notes;
    for (const auto& w : workloads) {
        auto fit = simulation::fit_to_preset(w, preset, presets);
        if (!fit) return fit.error();
        if (!fit->note.empty()) notes.push_back(fit->note);
        fitted.push_back(std::move(fit->workload));
    }
    if (notes.size() > 3) {
        std::cerr << "zeus: power-limit simulate: warning: " << notes.front() << "\n"
                  << "zeus: power-limit simulate: warning: and " << notes.size() - 1
                  << " more workloads of this trace likewise\n";
    } else {
        for (const auto& n : notes) std::cerr << "zeus: power-limit simulate: warning: " << n << "\n";
    }
    return fitted;
}

Result<simulation::TraceSimulationPlan> simulation_plan(const SimulateFlags& f, const std::string& gpu_model) {
    simulation::TraceSimulationPlan plan;
    plan.csv_path = f.trace;
    plan.gpu_model = gpu_model;
    plan.gpu_count = f.gpus;
    plan.steps_per_epoch = f.steps_per_epoch;
    plan.optimizer.wait_steps = f.wait_steps;
    plan.optimizer.warmup_steps = f.warmup_steps;
    plan.optimizer.profile_steps = f.profile_steps;
    plan.optimizer.pl_step = Watts(f.pl_step);
    if (!f.profile_path.empty()) plan.optimizer.profile_path = f.profile_path;
    auto intensity = intensity_now(f.selectors);
    if (!intensity) return intensity.error();
    auto in_use = parse_selector(f.selector, *intensity);
    if (!in_use) return in_use.error();
    plan.optimizer.selector = *in_use;
    auto selectors = parse_selectors(f.selectors.specs, *intensity);
    if (!selectors) return selectors.error();
    plan.report_selectors = *selectors;
    return plan;
}

void print_table_header(const std::vector<optimizer::SelectorPtr>& selectors) {
    std::cout << "| workload | batch | optimizer";
    for (const auto& s : selectors) std::cout << " | " << s->name();
    std::cout << " |\n|---|---:|---";
    for (std::size_t k = 0; k < selectors.size(); ++k) std::cout << "|---";
    std::cout << "|\n";
}

void print_table_row(const simulation::TraceWorkload& workload, const std::vector<optimizer::SelectorPtr>& selectors,
                     const optimizer::PowerLimitReport& report) {
    std::cout << "| " << workload.dataset << "/" << workload.network << " | " << workload.batch_size << " | "
              << workload.optimizer;
    // choices[0] is the optimizer's own selector; the rest follow --selector.
    for (const auto& s : selectors) {
        for (const auto& c : report.choices) {
            if (c.selector == s->name()) std::cout << " | " << saving_cell(c);
        }
    }
    std::cout << " |\n" << std::flush;
}

// Each workload's report as soon as it is simulated; JSON with several
// workloads is one document, a list (no headers between documents).
int print_simulations(const simulation::TraceSimulationPlan& plan,
                      const std::vector<simulation::TraceWorkload>& workloads, const std::string& format) {
    const bool table = format == "markdown";
    const bool json_list = format == "json" && workloads.size() > 1;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    if (table) print_table_header(plan.report_selectors);
    for (const auto& workload : workloads) {
        auto report = simulation::simulate_trace(plan, workload);
        if (!report) return fail("simulate", Error{report.error().code, workload.name() + ": " + report.error().message,
                                                   report.error().hint, 0},
                                 1);
        if (table) {
            print_table_row(workload, plan.report_selectors, *report);
        } else if (json_list) {
            list.push_back(nlohmann::ordered_json{{"dataset", workload.dataset},
                                                  {"network", workload.network},
                                                  {"batch_size", workload.batch_size},
                                                  {"optimizer", workload.optimizer},
                                                  {"gpu_model", plan.gpu_model},
                                                  {"report", nlohmann::ordered_json::parse(report->to_json())}});
        } else {
            if (workloads.size() > 1) std::cout << "== " << workload.name() << "\n";
            print(*report, format);
        }
    }
    if (json_list) std::cout << json_text(list, 2) << "\n" << std::flush;
    return 0;
}

int run_simulate(const SimulateFlags& f) {
    auto workloads = chosen_workloads(f);
    if (!workloads) return fail("simulate", workloads.error(), 2);
    auto environment = GpuOptions::from_environment();
    if (!environment) return fail("simulate", environment.error(), 2);
    auto library = locate_simulator_library(environment->simulator_library);
    if (!library) return fail("simulate", library.error(), 1);
    auto presets = simulation::simulator_presets(*library);
    if (!presets) return fail("simulate", presets.error(), 1);
    auto preset = simulation::choose_preset(*presets, f.gpu_model, f.trace);
    if (!preset) return fail("simulate", preset.error(), 2);
    auto fitted = fit_workloads(*workloads, *preset, *presets);
    if (!fitted) return fail("simulate", fitted.error(), 2);
    auto plan = simulation_plan(f, preset->key);
    if (!plan) return fail("simulate", plan.error(), 2);
    return print_simulations(*plan, *fitted, f.selectors.format);
}

void add_selector_flags(CLI::App& app, SelectorFlags& f, bool markdown) {
    app.add_option("--selector", f.specs,
                   "optimum selector to report (repeatable): time, energy, zeus-cost[:eta=E][,world_size=N], "
                   "max-slowdown:F, carbon[:eta=E][,threshold=T][,reference=R] (with --carbon-*); default: time, "
                   "energy, zeus-cost:eta=0.5, max-slowdown:1.1");
    // The carbon selector prices energy at the current UTC hour's intensity from these.
    add_carbon_options(app, f.carbon);
    std::vector<std::string> formats{"text", "json"};
    if (markdown) formats.emplace_back("markdown");
    app.add_option("--format", f.format, "output format")->check(one_of(formats))->capture_default_str();
}

}  // namespace

Command add_power_limit(CLI::App& parent) {
    auto* app = parent.add_subcommand("power-limit", "the power-limit optimizer's profiles: report, simulate");
    app->require_subcommand(1);

    auto report = std::make_shared<ReportFlags>();
    auto* r = app->add_subcommand("report", "what each optimum selector picks from a saved profile or a window log");
    r->add_option("--profile", report->profile, "profile JSON saved by the optimizer (profile_path)");
    r->add_option("--log", report->log, "energy-window CSV log recorded while the optimizer profiled");
    r->add_option("--world-size", report->world_size, "GPUs the energy sums over (default: the log's GPU columns, 1)")
        ->check(whole_number(1, 1000000));
    r->add_option("--steps", report->steps, "training steps per profiling window, to report per step")
        ->check(whole_number(1, 1LL << 40));
    add_selector_flags(*r, report->selectors, false);

    auto simulate = std::make_shared<SimulateFlags>();
    auto* s = app->add_subcommand("simulate", "run the optimizer on a simulated GPU following a measured power trace");
    s->add_option("--trace", simulate->trace, "power trace CSV (data/power-traces/summary_power_*.csv)")->required();
    s->add_option("--workload", simulate->workload, "DATASET/NETWORK, e.g. cifar100/shufflenetv2");
    s->add_option("--batch-size", simulate->batch_size, "batch size")->check(whole_number(1, 1LL << 30));
    s->add_option("--optimizer", simulate->optimizer, "training optimizer, when the trace has several");
    s->add_flag("--all", simulate->all, "every workload of the trace");
    s->add_option("--gpu-model", simulate->gpu_model, "simulator preset (default: from the trace's file name)");
    s->add_option("--gpus", simulate->gpus, "simulated GPUs running the workload together")
        ->check(whole_number(1, 16))
        ->capture_default_str();
    s->add_option("--wait-steps", simulate->wait_steps, "steps before profiling")
        ->check(whole_number(0, 1000000))
        ->capture_default_str();
    s->add_option("--warmup-steps", simulate->warmup_steps, "steps at each limit before its window")
        ->check(whole_number(0, 1000000))
        ->capture_default_str();
    s->add_option("--profile-steps", simulate->profile_steps, "steps in each limit's window")
        ->check(whole_number(1, 1000000))
        ->capture_default_str();
    s->add_option("--pl-step", simulate->pl_step, "W between candidate limits (default: every traced limit)")
        ->check(finite_number(1.0, 10000.0, "W"));
    s->add_option("--steps-per-epoch", simulate->steps_per_epoch, "training steps in one epoch")
        ->check(whole_number(1, 1000000))
        ->capture_default_str();
    s->add_option("--use", simulate->selector, "the selector the optimizer goes with")->capture_default_str();
    s->add_option("--profile-path", simulate->profile_path,
                  "save the optimizer's profile to FILE (its profile_path; `power-limit report --profile FILE` reads "
                  "it); an existing FILE is used instead of profiling");
    add_selector_flags(*s, simulate->selectors, true);

    return [app, r, s, report, simulate] {
        if (r->parsed()) return run_report(*report);
        if (s->parsed()) return run_simulate(*simulate);
        std::cerr << app->help();
        return 2;
    };
}

}  // namespace zeus::cli
