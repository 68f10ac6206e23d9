// `zeus perseus-server`: the Perseus (pipeline frequency optimizer) server,
// the original's REST API (docs/perseus.md) over the project's HTTP server
// component. Settings come from flags or, as the original, ZEUS_PFO_*.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "option_checks.hpp"
#include "server_listen.hpp"
#include "zeus/perseus/server.hpp"

namespace zeus::cli {
namespace {

struct PerseusServerFlags {
    std::string listen = "127.0.0.1:8000";
    std::string scheduler;
    std::string solution;
    std::string dump_dir;
    bool no_dump = false;
    long long max_job_idle_time = -1;
    unsigned threads = 2;
    double request_timeout_s = 30;
};

const char* env(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? value : nullptr;
}

// Flags win over ZEUS_PFO_* (the original's PFOServerSettings); throws
// std::invalid_argument naming the variable or flag at fault.
perseus::PfoSettings settings_from(const PerseusServerFlags& flags) {
    perseus::PfoSettings settings;
    if (const char* v = env("ZEUS_PFO_SCHEDULER")) settings.scheduler = v;
    if (!flags.scheduler.empty()) settings.scheduler = flags.scheduler;
    if (const char* v = env("ZEUS_PFO_SCHEDULER_ARGS")) {
        nlohmann::json args;
        try {
            args = nlohmann::json::parse(v);
        } catch (const nlohmann::json::parse_error&) {
            throw std::invalid_argument("ZEUS_PFO_SCHEDULER_ARGS is not JSON; write e.g. '{\"solution_path\": \"freqs.json\"}'");
        }
        if (!args.is_object()) throw std::invalid_argument("ZEUS_PFO_SCHEDULER_ARGS must be a JSON object");
        for (const auto& [key, value] : args.items()) {
            if (key != "solution_path" || !value.is_string())
                throw std::invalid_argument("ZEUS_PFO_SCHEDULER_ARGS: " + settings.scheduler +
                                            " takes exactly one argument, solution_path (a string); got '" + key + "'");
            settings.solution_path = value.get<std::string>();
        }
    }
    if (!flags.solution.empty()) settings.solution_path = flags.solution;
    if (const char* v = env("ZEUS_PFO_DUMP_DIR")) settings.dump_dir = v;
    if (!flags.dump_dir.empty()) settings.dump_dir = flags.dump_dir;
    if (const char* v = env("ZEUS_PFO_DUMP_DATA")) {
        std::string value = v;
        std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
        if (value == "0" || value == "false" || value == "no" || value == "off") settings.dump_data = false;
        else if (value == "1" || value == "true" || value == "yes" || value == "on") settings.dump_data = true;
        else throw std::invalid_argument("ZEUS_PFO_DUMP_DATA must be true or false, not '" + value + "'");
    }
    if (flags.no_dump) settings.dump_data = false;
    long long idle = flags.max_job_idle_time;
    if (idle < 0) {
        if (const char* v = env("ZEUS_PFO_MAX_JOB_IDLE_TIME")) {
            char* end = nullptr;
            idle = std::strtoll(v, &end, 10);
            if (*end != '\0' || idle <= 0)
                throw std::invalid_argument(std::string("ZEUS_PFO_MAX_JOB_IDLE_TIME must be a positive number of seconds, not '") + v + "'");
        }
    }
    if (idle > 0) settings.max_job_idle_time = std::chrono::seconds(idle);
    return settings;
}

int run_perseus_server(const PerseusServerFlags& flags) {
    perseus::ServerOptions options;
    try {
        options.settings = settings_from(flags);
        perseus::check_settings(options.settings);
    } catch (const std::exception& e) {
        std::cerr << "zeus perseus-server: " << e.what() << "\n";
        return 2;
    }
    const perseus::PfoSettings& settings = options.settings;
    options.threads = flags.threads;
    options.request_timeout = request_timeout(flags.request_timeout_s);
    options.log = [](const std::string& message) { std::cerr << "zeus perseus-server: " << message << "\n"; };
    perseus::Server server(options);
    const auto address = listening(server.listen_tcp(flags.listen), flags.listen, "zeus perseus-server", 8000);
    if (!address) return 2;
    const int signal = server.serve_until_signalled([&] {
        std::cerr << fmt::format("zeus perseus-server: listening on {} with {} ('{}'){}\n", *address,
                                 settings.scheduler, settings.solution_path.string(),
                                 settings.dump_data ? ", dumping to " + settings.dump_dir.string() : "");
    });
    say_stopped("zeus perseus-server", signal);
    return 0;
}

}  // namespace

Command add_perseus_server(CLI::App& parent) {
    auto flags = std::make_shared<PerseusServerFlags>();
    auto* app = parent.add_subcommand(
        "perseus-server", "Serve Perseus frequency schedules to training ranks (Zeus's PFO server REST API)");
    app->add_option("--listen", flags->listen, kListenHelp)->capture_default_str();
    app->add_option("--scheduler", flags->scheduler,
                    "PointSolution (one schedule per rank) or PointSolution3D (one per pipeline stage); "
                    "default $ZEUS_PFO_SCHEDULER or PointSolution");
    app->add_option("--solution", flags->solution,
                    "schedule file from `zeus perseus solve` (JSON) or lowtime's freqs_pipeline_NNNNN.py; "
                    "default: solution_path in $ZEUS_PFO_SCHEDULER_ARGS");
    app->add_option("--dump-dir", flags->dump_dir, "where each job's ranks, schedules and results are written "
                                                   "(default $ZEUS_PFO_DUMP_DIR or ./dump)");
    app->add_flag("--no-dump", flags->no_dump, "write nothing (as ZEUS_PFO_DUMP_DATA=false)");
    app->add_option("--max-job-idle-time", flags->max_job_idle_time,
                    "seconds after which an idle job is forgotten (default $ZEUS_PFO_MAX_JOB_IDLE_TIME or 604800)")
        ->check(whole_number(1, 1LL << 40));
    app->add_option("--threads", flags->threads, "HTTP worker threads (a waiting GET /schedule holds none)")
        ->capture_default_str()
        ->check(whole_number(1, 256));
    add_request_timeout_option(*app, flags->request_timeout_s);
    return [flags] { return run_perseus_server(*flags); };
}

}  // namespace zeus::cli
