// zeus-sim: drive the simulated GPUs of libnvidia-ml.so.1 from the shell.
#include <CLI/CLI.hpp>

#include "commands.h"

using namespace zeus::sim::cli;

int main(int argc, char** argv) {
  CLI::App app{
      "zeus-sim: control the simulated GPUs behind the simulator's libnvidia-ml.so.1.\n"
      "Configuration: $ZEUS_SIM_CONFIG (JSON; default two A100-SXM4-40GB). Shared state: $ZEUS_SIM_STATE.\n"
      "See docs/simulator.md."};
  app.require_subcommand(1);

  BurnOptions burn;
  auto* burn_cmd = app.add_subcommand("burn", "Hold a constant load on GPUs for some seconds");
  burn_cmd->add_option("--gpu", burn.gpu, "GPU index or \"all\"")->capture_default_str();
  burn_cmd->add_option("--seconds", burn.seconds, "How long to hold the load")->capture_default_str()
      ->check(CLI::PositiveNumber);
  burn_cmd->add_option("--util", burn.utilization, "Utilization in (0, 1]")->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));

  WorkOptions work;
  auto* work_cmd = app.add_subcommand("work", "Run a fixed amount of work and print the elapsed seconds");
  work_cmd->add_option("--gpu", work.gpu, "GPU index")->capture_default_str();
  auto* units = work_cmd->add_option("--units", work.units,
                                     "Work units (1 unit = 1 s at full utilization and maximum clock)");
  work_cmd->add_option("--util", work.utilization, "Utilization in (0, 1]")->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  auto* trace = work_cmd->add_option("--trace", work.trace_csv, "Power-trace CSV (data/power-traces/summary_power_*.csv)");
  work_cmd->add_option("--workload", work.workload, "dataset/network in the trace, e.g. cifar100/shufflenetv2")
      ->needs(trace);
  work_cmd->add_option("--batch-size", work.batch_size, "Batch size in the trace")->needs(trace);
  work_cmd->add_option("--optimizer", work.optimizer, "Optimizer in the trace (if several)")->needs(trace);
  work_cmd->add_option("--epochs", work.epochs, "Epochs of the traced workload to run")->needs(trace);
  units->excludes(trace);

  std::string format = "text";
  auto* status_cmd = app.add_subcommand("status", "Show every GPU: true power, temperature, clock, limit, energy, counters");
  status_cmd->add_option("--format", format, "text or json")->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));

  double seconds = 0;
  auto* advance_cmd = app.add_subcommand("advance", "Move the virtual clock forward");
  advance_cmd->add_option("SECONDS", seconds, "Seconds to advance")->required()->check(CLI::NonNegativeNumber);

  FaultOptions fault;
  auto* fault_cmd = app.add_subcommand("fault", "Inject a fault into a GPU (see docs/simulator.md for names)");
  fault_cmd->add_option("--gpu", fault.gpu, "GPU index")->capture_default_str();
  fault_cmd->add_option("NAME", fault.name,
                        "counter_reset, stuck_counter, power_spike, lost, energy_not_supported, set_temperature, clear")
      ->required();
  fault_cmd->add_option("VALUE", fault.value, "Value of the fault")->capture_default_str();

  bool print_default = false;
  auto* config_cmd = app.add_subcommand("config", "Configuration helpers");
  config_cmd->add_flag("--print-default", print_default, "Print the default configuration as JSON");

  CLI11_PARSE(app, argc, argv);

  if (*burn_cmd) return run_burn(burn);
  if (*work_cmd) return run_work(work);
  if (*status_cmd) return run_status(format);
  if (*advance_cmd) return run_advance(seconds);
  if (*fault_cmd) return run_fault(fault);
  if (*config_cmd) {
    if (print_default) return run_print_default_config();
    std::fprintf(stderr, "zeus-sim: error: config needs an action (try: zeus-sim config --print-default)\n");
    return 2;
  }
  return 2;
}
