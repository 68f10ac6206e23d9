#include "run_push.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "option_checks.hpp"
#include "zeus/metrics/pushed_metrics.hpp"

namespace zeus::cli {

void add_run_push_options(CLI::App& app, RunPushOptions& options) {
    app.add_option("--push-gateway", options.gateway,
                   "Push the command's energy to this Prometheus Pushgateway when it ends (http://HOST:PORT)");
    app.add_option("--job", options.job, "The Pushgateway job name the energy is pushed under (with --push-gateway)")
        ->check(utf8_name());
}

Result<std::unique_ptr<metrics::Pushgateway>> open_run_push(const RunPushOptions& options) {
    if (options.gateway.empty()) {
        if (!options.job.empty()) {
            return Error{ErrorCode::InvalidArgument, "--job is only used with --push-gateway",
                         "add --push-gateway http://HOST:PORT, or leave --job out"};
        }
        return std::unique_ptr<metrics::Pushgateway>();
    }
    if (options.job.empty()) {
        return Error{ErrorCode::InvalidArgument, "--push-gateway needs --job NAME",
                     "name the job the energy is pushed under, e.g. --job training"};
    }
    auto gateway = metrics::Pushgateway::open(options.gateway, options.job);
    if (!gateway) {
        Error error = gateway.error();
        error.message = "--push-gateway: " + error.message;
        return error;
    }
    return std::move(gateway).value();
}

void push_run_energy(metrics::Pushgateway& gateway, const Measurement& measurement,
                     const std::vector<std::string>& command) {
    const std::string window = command.empty() ? "run" : std::filesystem::path(command.front()).filename().string();
    // Bucket warnings are for repeated windows; one run is not a distribution.
    const auto families = metrics::window_energy_histograms(window, measurement, {});
    if (auto pushed = gateway.push(families); !pushed) {
        std::cerr << "zeus: warning: " << pushed.error().describe() << "\n";
    }
}

}  // namespace zeus::cli
