// The zeus-sim subcommands. Each returns the process exit code and reports
// problems on stderr as "zeus-sim: error: <what> (<how to fix>)".
#pragma once

#include <optional>
#include <string>

namespace zeus::sim::cli {

struct BurnOptions {
  std::string gpu = "0";
  double seconds = 5.0;
  double utilization = 1.0;
  int pid = 0;                // the process the load is attributed to; 0: zeus-sim's own
  double power_weight = 1.0;  // dynamic power per unit of utilization, relative to the GPU's
};

struct ProcessEnergyOptions {
  std::string gpu = "0";
  int pid = 0;
  std::string format = "text";
};

struct WorkOptions {
  std::string gpu = "0";
  std::optional<double> units;
  double utilization = 1.0;
  std::string trace_csv;
  std::string workload;
  int batch_size = 0;
  std::string optimizer;
  std::optional<double> epochs;
};

struct FaultOptions {
  std::string gpu = "0";
  std::string name;
  double value = 1.0;
};

int run_burn(const BurnOptions& options);
int run_work(const WorkOptions& options);
int run_status(const std::string& format);
int run_advance(double seconds);
int run_fault(const FaultOptions& options);
int run_print_default_config();
int run_process_energy(const ProcessEnergyOptions& options);
int run_sharing(const std::string& gpu, const std::string& mode);

}  // namespace zeus::sim::cli
