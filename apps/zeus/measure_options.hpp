// Options shared by the measurement commands (`zeus power`, `zeus energy`,
// `zeus run`) and their validation. Everything here is pure: parsing and
// checking text against device counts, so it is unit-tested without devices.
#pragma once


#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "charged_windows.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/report/measurement_report.hpp"

// CLI11 is heavy to parse (seconds per file): only files that register
// options include it.
namespace CLI {
class App;
}  // namespace CLI

namespace zeus::cli {

using report::OutputFormat;
[[nodiscard]] Result<OutputFormat> parse_format(std::string_view text);

struct MeasureOptions {
    DeviceFlags device;
    std::string gpus = "all";  // "all", "none" or a comma-separated list of visible indices
    std::string cpus = "all";  // the same for RAPL CPU packages
    double interval_s = 1.0;   // print / CPU sampling period (power, run)
    std::string format = "human";
    // Report destination: a file, "-" for standard output, or empty for the
    // default: standard output, or standard error when zeus runs a command
    // (`runs_command`), whose output keeps standard output (docs/cli.md).
    std::string output;
    bool runs_command = false;
    std::string log_file;  // energy-window CSV log (the original's format)
    std::string trace;     // Chrome/Perfetto JSON trace (power, run)
    std::optional<double> duration_s;  // stop after this long (power, energy)
    std::string power_domain = "device_instant";  // power
    // Window edges from the counters' next refreshes (EnergyMonitorOptions):
    // for commands that have nothing to do right after an edge.
    bool wait_for_counter_refresh = true;
    // Without waiting: where each edge takes a GPU's energy from.
    WindowEdges window_edges = WindowEdges::Sampled;
    ChargeOptions charges;  // energy, run: carbon and cost of the window
};

// Which of the shared options a command takes.
struct MeasureFlags {
    const char* interval_help = nullptr;  // null: no --interval
    bool trace = false;
    bool duration = false;
    bool power_domain = false;
    bool charges = false;  // --carbon-* and --price*
};
void add_measure_options(CLI::App& app, MeasureOptions& options, MeasureFlags which);

// "all" -> nullopt (every device), "none" -> {} (no device of that kind),
// "0,2" -> {0, 2}. Errors name the option and the offending entry.
[[nodiscard]] Result<std::optional<std::vector<unsigned>>> parse_index_list(std::string_view option,
                                                                           std::string_view text);

// "0-3", "0", "0-1" for a count of devices; "none" for 0.
[[nodiscard]] std::string index_range(std::size_t count);

// Every index must be below `count`. The error names the option, the bad
// index, what the valid range is and, when there are no devices of that kind
// at all, `why_none` (e.g. the GPU library's status).
[[nodiscard]] Status check_indices(std::string_view option, std::string_view device_word,
                                   const std::vector<unsigned>& indices, std::size_t count,
                                   std::string_view why_none = {});

[[nodiscard]] Result<PowerDomain> parse_power_domain(std::string_view text);

// Opens (creating, never truncating) `path` for writing to find out early
// whether it can be written; the error names the option, the path and the
// operating system's reason.
[[nodiscard]] Status check_writable(std::string_view option, const std::string& path);

// An output file an option names: {"--trace", "run.json"}.
struct NamedOutput {
    std::string_view option;
    std::string path;  // empty: not given
};

// Refuses two options naming one file, by path or as the same existing file
// under another name (a link, `./x` and `x`): one would overwrite the other.
// Character devices (/dev/null) may be shared.
[[nodiscard]] Status check_distinct_outputs(const std::vector<NamedOutput>& outputs);

}  // namespace zeus::cli
