// What a measurement prints: the energy report of a window (`zeus energy`,
// `zeus run`, the end of `zeus power`, and zeus_native's
// Measurement.to_json()/to_csv()) and the power readings of `zeus power`, in
// three formats. One implementation for the CLI and the Python package, so
// both write the same bytes for the same data.
//
//   auto report = zeus::report::measurement_report(m, "energy", gpus, &cpus, soc);
//   std::cout << zeus::report::render_report(report, zeus::report::OutputFormat::Json);
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/carbon/charge_report.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"
#include "zeus/monitor/measurement.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/report/child_status.hpp"

namespace zeus::report {

enum class OutputFormat { Human, Csv, Json };
// "human", "csv", "json"; the error names `option` (e.g. "--format").
[[nodiscard]] Result<OutputFormat> parse_output_format(std::string_view option, std::string_view text);

// One device's energy over the measured window.
struct DeviceEnergy {
    std::string device;             // "GPU 0", "CPU 0", "DRAM 0", "SoC gpu": the label used everywhere
    std::string kind;               // "gpu", "cpu", "dram", "soc"
    std::optional<unsigned> index;  // GPU/CPU index (nullopt for SoC metrics)
    std::string name;               // "NVIDIA A100-SXM4-40GB", "package-0", ...
    double energy_j = 0.0;
    // "energy_counter", "integrated_power", "instant_power_approximation"; "lost" (every format) when `lost`
    std::string source;
    std::vector<std::string> warnings;
    bool lost = false;  // the device stopped answering: no energy (left out of the total, see warnings)
};

// The result of one measured window.
struct EnergyReport {
    std::string command_name;          // "energy", "run", "power"
    std::vector<std::string> command;  // run: the command line
    std::optional<ChildStatus> child;  // run: how the command ended (nullopt: it could not be waited for)
    std::optional<int> interrupted_by;  // the signal that ended the measurement early, if one did
    WallTime start_time;
    double time_s = 0.0;
    std::vector<DeviceEnergy> devices;
    std::vector<std::string> warnings;  // about the window as a whole
    bool simulated = false;             // the GPUs are the Zeus GPU simulator's
    // The window's carbon emission and electricity cost with their provenance
    // (zeus/carbon/), printed beside the joules when asked for.
    std::optional<carbon::ChargeLine> carbon;
    std::optional<carbon::ChargeLine> cost;

    // Every GPU, CPU and DRAM value (SoC metrics overlap the rest and lost devices have none).
    [[nodiscard]] double total_energy_j() const;
};

// Labels used everywhere for devices: "GPU 0", "CPU 0".
[[nodiscard]] std::string gpu_label(unsigned index);
[[nodiscard]] std::string cpu_label(unsigned index);

// The report of `m`, with device names from the sets it was measured on
// (`cpus` and `soc` may be null when not open).
[[nodiscard]] EnergyReport measurement_report(const Measurement& m, std::string command_name, const Gpus& gpus,
                                              const Cpus* cpus, const Soc* soc);

// human: a table; csv: a header and one row per device; json: one object
// (pretty, or on one line with "type": "summary" when `json_line`).
[[nodiscard]] std::string render_report(const EnergyReport& report, OutputFormat format, bool json_line = false);

// One power reading: a power per device (nullopt: not readable now).
struct PowerRow {
    WallTime wall;
    double elapsed_s = 0.0;
    std::vector<std::optional<double>> watts;  // in the order of the device list
};

// csv: the header line; human and json: nothing.
[[nodiscard]] std::string render_power_header(const std::vector<std::string>& devices, OutputFormat format);
// human: "2024-05-01 14:00:00.123  GPU 0: 231.4 W  CPU 0: 40.2 W"; csv: one
// row; json: one line {"type": "power", ...} (JSON Lines).
[[nodiscard]] std::string render_power_row(const std::vector<std::string>& devices, const PowerRow& row,
                                           OutputFormat format);

// "energy counter", "integrated power", "instant power x time".
[[nodiscard]] std::string source_label(const std::string& source);
// 2024-05-01T12:00:00.123Z
[[nodiscard]] std::string iso_utc(WallTime t);
// 2024-05-01 14:00:00.123 +0200 (local time, with its offset from UTC)
[[nodiscard]] std::string local_time(WallTime t);
// A CSV field, quoted when it needs to be.
[[nodiscard]] std::string csv_field(const std::string& text);

}  // namespace zeus::report
