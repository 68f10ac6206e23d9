// `zeus run --push-gateway URL --job NAME`: when the command ends, its energy
// goes to a Prometheus Pushgateway as the original's EnergyHistogram would
// push one window (histograms energy_monitor_{gpu,cpu,dram}_energy_joules,
// window = the command's name), for batch jobs that no exporter outlives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/metrics/pushgateway.hpp"
#include "zeus/monitor/measurement.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace zeus::cli {

struct RunPushOptions {
    std::string gateway;  // empty: no push
    std::string job;
};
void add_run_push_options(CLI::App& app, RunPushOptions& options);

// Checks the URL and job before the command runs; null when no push was asked for.
[[nodiscard]] Result<std::unique_ptr<metrics::Pushgateway>> open_run_push(const RunPushOptions& options);

// Pushes; a gateway that cannot be reached is a warning on stderr (the
// measurement was printed and the command's exit code stands).
void push_run_energy(metrics::Pushgateway& gateway, const Measurement& measurement,
                     const std::vector<std::string>& command);

}  // namespace zeus::cli
