// zeus-sim: drive the simulated GPUs of libnvidia-ml.so.1 from the shell.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "zeus/platform/standard_descriptors.hpp"

using namespace zeus::sim::cli;

namespace {

// CLI11's NonNegativeNumber/PositiveNumber print DBL_MAX's 309 digits as the
// upper bound; this says what is wanted instead. Upper limits are the library's.
CLI::Validator seconds_validator(bool allow_zero) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        const bool ok = !text.empty() && *end == '\0' && (allow_zero ? x >= 0 : x > 0);
        return ok ? std::string() : std::string("must be a number of seconds ") + (allow_zero ? ">= 0" : "> 0") +
                                        ", got " + text;
      },
      "SECONDS");
}

std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

CLI::App* add_burn(CLI::App& app, BurnOptions& burn) {
  auto* cmd = app.add_subcommand("burn", "Hold a constant load on GPUs for some seconds");
  cmd->add_option("--gpu", burn.gpu, "GPU index or \"all\"")->capture_default_str();
  cmd->add_option("--seconds", burn.seconds, "How long to hold the load")
      ->capture_default_str()
      ->check(seconds_validator(false));
  cmd->add_option("--util", burn.utilization, "Utilization in (0, 1]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--pid", burn.pid, "The process the load is attributed to (default: zeus-sim's own)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--power-weight", burn.power_weight,
                  "Dynamic power per unit of utilization, relative to the GPU's, in (0, 10]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  return cmd;
}

CLI::App* add_work(CLI::App& app, WorkOptions& work) {
  auto* cmd = app.add_subcommand("work", "Run a fixed amount of work and print the elapsed seconds");
  cmd->add_option("--gpu", work.gpu, "GPU index")->capture_default_str();
  auto* units =
      cmd->add_option("--units", work.units, "Work units (1 unit = 1 s at full utilization and maximum clock)");
  cmd->add_option("--util", work.utilization, "Utilization in (0, 1]")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  auto* trace = cmd->add_option("--trace", work.trace_csv, "Power-trace CSV (data/power-traces/summary_power_*.csv)");
  cmd->add_option("--workload", work.workload, "dataset/network in the trace, e.g. cifar100/shufflenetv2")
      ->needs(trace);
  cmd->add_option("--batch-size", work.batch_size, "Batch size in the trace")->needs(trace);
  cmd->add_option("--optimizer", work.optimizer, "Optimizer in the trace (if several)")->needs(trace);
  cmd->add_option("--epochs", work.epochs, "Epochs of the traced workload to run")->needs(trace);
  units->excludes(trace);
  return cmd;
}

CLI::App* add_fault(CLI::App& app, FaultOptions& fault) {
  auto* cmd = app.add_subcommand("fault", "Inject a fault into a GPU (see docs/simulator.md for names)");
  cmd->add_option("--gpu", fault.gpu, "GPU index")->capture_default_str();
  cmd->add_option("NAME", fault.name,
                  "counter_reset, stuck_counter, power_spike, lost, energy_not_supported, set_temperature, clear")
      ->required();
  cmd->add_option("VALUE", fault.value, "Value of the fault")->capture_default_str();
  return cmd;
}

// The exit status of a command line that names no valid subcommand, or
// nullopt when there is one to run. Mistakes exit with 2 (docs/simulator.md),
// not CLI11's own codes.
std::optional<int> parse_failure(CLI::App& app, int argc, char** argv) {
  const auto exit_for = [&](const CLI::ParseError& e) { return app.exit(e) == 0 ? 0 : 2; };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    const std::vector<std::string> extras = app.remaining();
    if (!app.get_subcommands().empty() || extras.empty() || extras.front().rfind('-', 0) == 0) return exit_for(e);
    std::fprintf(stderr, "zeus-sim: error: unknown subcommand \"%s\" (valid subcommands: %s; see zeus-sim --help)\n",
                 extras.front().c_str(), subcommand_names(app).c_str());
    return 2;
  } catch (const CLI::ParseError& e) {
    return exit_for(e);
  }
  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "zeus-sim: error: a subcommand is required (one of: %s; see zeus-sim --help)\n",
                 subcommand_names(app).c_str());
    return 2;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  zeus::occupy_closed_standard_descriptors();  // before any file is opened
  CLI::App app{
      "zeus-sim: control the simulated GPUs behind the simulator's libnvidia-ml.so.1.\n"
      "Configuration: $ZEUS_SIM_CONFIG (JSON; default two A100-SXM4-40GB). Shared state: $ZEUS_SIM_STATE.\n"
      "See docs/simulator.md."};
  // At most one; a missing or unknown one is reported below with the valid names.
  app.require_subcommand(0, 1);

  BurnOptions burn;
  auto* burn_cmd = add_burn(app, burn);
  WorkOptions work;
  auto* work_cmd = add_work(app, work);

  std::string format = "text";
  auto* status_cmd = app.add_subcommand("status", "Show every GPU: true power, temperature, clock, limit, energy, counters");
  status_cmd->add_option("--format", format, "text or json")->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));

  double seconds = 0;
  auto* advance_cmd = app.add_subcommand("advance", "Move the virtual clock forward");
  advance_cmd->add_option("SECONDS", seconds, "Seconds to advance (at most 1e7 per call)")->required()
      ->check(seconds_validator(true));

  FaultOptions fault;
  auto* fault_cmd = add_fault(app, fault);

  ProcessEnergyOptions process_energy;
  auto* process_cmd = app.add_subcommand("process-energy", "Print a process's ground-truth energy on a GPU");
  process_cmd->add_option("--gpu", process_energy.gpu, "GPU index")->capture_default_str();
  process_cmd->add_option("--pid", process_energy.pid, "The process")->required();
  process_cmd->add_option("--format", process_energy.format, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));

  std::string sharing_gpu = "all", sharing_mode;
  auto* sharing_cmd = app.add_subcommand("sharing", "How processes share a GPU: concurrent (MPS-like) or time_sliced");
  sharing_cmd->add_option("--gpu", sharing_gpu, "GPU index or \"all\"")->capture_default_str();
  sharing_cmd->add_option("MODE", sharing_mode, "concurrent or time_sliced")
      ->required()
      ->check(CLI::IsMember({"concurrent", "time_sliced"}));

  bool print_default = false;
  auto* config_cmd = app.add_subcommand("config", "Configuration helpers");
  config_cmd->add_flag("--print-default", print_default, "Print the default configuration as JSON");

  if (auto status = parse_failure(app, argc, argv)) return *status;
  if (*burn_cmd) return run_burn(burn);
  if (*work_cmd) return run_work(work);
  if (*status_cmd) return run_status(format);
  if (*advance_cmd) return run_advance(seconds);
  if (*fault_cmd) return run_fault(fault);
  if (*process_cmd) return run_process_energy(process_energy);
  if (*sharing_cmd) return run_sharing(sharing_gpu, sharing_mode);
  if (*config_cmd) {
    if (print_default) return run_print_default_config();
    std::fprintf(stderr, "zeus-sim: error: config needs an action (try: zeus-sim config --print-default)\n");
    return 2;
  }
  return 2;
}
