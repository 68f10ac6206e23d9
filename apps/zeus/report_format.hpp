// What the measurement commands print, in the three output formats. Pure
// functions of plain data, so every format is unit-tested without devices.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "measure_options.hpp"

namespace zeus::cli {

// One device's energy over the measured window.
struct DeviceEnergy {
    std::string device;             // "GPU 0", "CPU 0", "DRAM 0", "SoC gpu": the label used everywhere
    std::string kind;               // "gpu", "cpu", "dram", "soc"
    std::optional<unsigned> index;  // GPU/CPU index (nullopt for SoC metrics)
    std::string name;               // "NVIDIA A100-SXM4-40GB", "package-0", ...
    double energy_j = 0.0;
    std::string source;  // "energy_counter", "integrated_power", "instant_power_approximation"
    std::vector<std::string> warnings;
    bool lost = false;  // the device stopped answering: no energy (left out of the total, see warnings)
};

// The result of `zeus energy`, `zeus run` or the end of `zeus power`.
struct EnergyReport {
    std::string command_name;          // "energy", "run", "power"
    std::vector<std::string> command;  // run: the command line
    std::optional<ChildStatus> child;  // run: how the command ended (nullopt: it could not be waited for)
    std::optional<int> interrupted_by;  // the signal that ended the measurement early, if one did
    std::chrono::system_clock::time_point start_time;
    double time_s = 0.0;
    std::vector<DeviceEnergy> devices;
    std::vector<std::string> warnings;  // about the window as a whole
    bool simulated = false;             // the GPUs are the Zeus GPU simulator's

    // Every GPU, CPU and DRAM value (SoC metrics overlap the rest and lost devices have none).
    [[nodiscard]] double total_energy_j() const;
};

// "energy counter", "integrated power", "instant power x time".
[[nodiscard]] std::string source_label(const std::string& source);

// 2024-05-01T12:00:00.123Z
[[nodiscard]] std::string iso_utc(std::chrono::system_clock::time_point t);
// 2024-05-01 14:00:00.123 (local time)
[[nodiscard]] std::string local_time(std::chrono::system_clock::time_point t);

[[nodiscard]] nlohmann::ordered_json report_json(const EnergyReport& report);
// human: a table; csv: a header and one row per device; json: one object
// (pretty, or on one line with "type": "summary" when `json_line`).
[[nodiscard]] std::string render_report(const EnergyReport& report, OutputFormat format, bool json_line = false);

// One reading of `zeus power`: a power per device (nullopt: not readable now).
struct PowerRow {
    std::chrono::system_clock::time_point wall;
    double elapsed_s = 0.0;
    std::vector<std::optional<double>> watts;  // in the order of the device list
};

// csv: the header line; human and json: nothing.
[[nodiscard]] std::string render_power_header(const std::vector<std::string>& devices, OutputFormat format);
// human: "2024-05-01 14:00:00.123  GPU 0: 231.4 W  CPU 0: 40.2 W"; csv: one
// row; json: one line {"type": "power", ...} (JSON Lines).
[[nodiscard]] std::string render_power_row(const std::vector<std::string>& devices, const PowerRow& row,
                                           OutputFormat format);

// A CSV field, quoted when it needs to be.
[[nodiscard]] std::string csv_field(const std::string& text);

}  // namespace zeus::cli
