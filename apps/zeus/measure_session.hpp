// What `zeus power`, `zeus energy` and `zeus run` share: opening and
// selecting devices, the energy monitor, the output stream, CPU power from
// energy differences, turning a Measurement into a report, and the trace.
#pragma once

#include <fstream>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure_options.hpp"
#include "trace_writer.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"
#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/monitor/measurement.hpp"
#include "zeus/monitor/power_monitor.hpp"
#include "zeus/monitor/power_readings.hpp"
#include "zeus/report/measurement_report.hpp"

namespace zeus::cli {

// The measurement report and its formats live in the library (shared with the
// Python package); these are the names the commands use.
using report::EnergyReport;
using report::PowerRow;
using report::cpu_label;
using report::gpu_label;
using report::iso_utc;
using report::render_power_header;
using report::render_power_row;
using report::render_report;

// Exit code for an error found before measuring: 2 for bad input (options,
// environment, files, device indices), 1 for anything else.
[[nodiscard]] int setup_exit_code(const Error& error);

// --output FILE: written into a temporary file beside FILE, which replaces
// FILE once a report is in it, so that a command that is not found, a failed
// start or a report that cannot be written never truncates an earlier report.
// A device or FIFO (/dev/full, a named pipe) is written directly.
class ReportFile {
  public:
    static Result<std::unique_ptr<ReportFile>> open(const std::string& path);
    ReportFile(const ReportFile&) = delete;
    ReportFile& operator=(const ReportFile&) = delete;
    ~ReportFile();  // removes the temporary file unless it replaced FILE
    [[nodiscard]] std::ofstream& stream() { return stream_; }
    // Puts the temporary file in FILE's place (once; writing goes on into it).
    [[nodiscard]] Status replace_target();

  private:
    ReportFile() = default;
    std::string target_;
    std::string temporary_;  // empty: writing `target_` itself
    std::ofstream stream_;
};

class MeasureSession {
  public:
    // Validates the options and files, opens and selects the devices and
    // starts an energy monitor over them. Notes about devices left out go to
    // standard error.
    static Result<std::unique_ptr<MeasureSession>> open(const MeasureOptions& options, bool want_trace);
    MeasureSession(const MeasureSession&) = delete;
    MeasureSession& operator=(const MeasureSession&) = delete;
    ~MeasureSession();

    [[nodiscard]] const Gpus& gpus() const { return gpus_; }
    [[nodiscard]] const Cpus& cpus() const { return cpus_; }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const { return gpu_indices_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const { return cpu_indices_; }
    [[nodiscard]] EnergyMonitor& monitor() { return *monitor_; }
    [[nodiscard]] OutputFormat format() const { return format_; }
    [[nodiscard]] PowerDomain power_domain() const { return domain_; }
    [[nodiscard]] std::ostream& out() { return out_file_ ? out_file_->stream() : *out_; }
    // Flushes the report; an error naming where it went (--output PATH,
    // standard output or error) when it could not be written whole, e.g. a
    // full disk or /dev/full: a report that was lost is never a success.
    // The first flush with anything written puts --output FILE in place.
    [[nodiscard]] Status flush_output();
    [[nodiscard]] const std::string& trace_path() const { return trace_path_; }
    // True when the report takes standard output (`--output -`) from the command zeus runs.
    [[nodiscard]] bool command_stdout_to_stderr() const { return command_stdout_to_stderr_; }

    // Starts a power monitor over the selected GPUs (none when no GPU is
    // selected). keep_all: keep every sample (for a trace), otherwise a few.
    Status start_power_monitor(bool keep_all);
    [[nodiscard]] PowerMonitor* power_monitor() { return power_monitor_.get(); }
    [[nodiscard]] const PowerMonitor* power_monitor() const { return power_monitor_.get(); }

    // The labels of the selected devices, GPUs first: "GPU 0", "CPU 0".
    [[nodiscard]] std::vector<std::string> power_devices() const;

    [[nodiscard]] EnergyReport report(const Measurement& m, std::string command_name) const;

    // --carbon-* / --price*: begin the hourly split right after the window
    // begins; the report of the ended window with its carbon and cost.
    void begin_charges();
    [[nodiscard]] EnergyReport charged_report(const Measurement& m, std::string command_name);

  private:
    MeasureSession() = default;
    Gpus gpus_;
    Cpus cpus_;
    std::unique_ptr<Soc> soc_;
    std::vector<unsigned> gpu_indices_;
    std::vector<unsigned> cpu_indices_;
    OutputFormat format_ = OutputFormat::Human;
    PowerDomain domain_ = PowerDomain::DeviceInstant;
    std::ostream* out_ = nullptr;
    std::unique_ptr<ReportFile> out_file_;
    std::string out_name_;  // for errors: "--output PATH", "standard output"
    bool command_stdout_to_stderr_ = false;
    std::string trace_path_;
    // Declared after the devices they read, so they are destroyed (threads joined) first.
    std::unique_ptr<PowerMonitor> power_monitor_;
    std::unique_ptr<EnergyMonitor> monitor_;
    std::unique_ptr<ChargedWindows> charges_;  // over monitor_: destroyed (thread joined) before it
};

class TraceRecorder;

// Completes a trace at `end`: the CPU tracks' last period (since `last_cpu`),
// then every GPU's power timeline from the session's power monitor.
void finish_trace(TraceRecorder& trace, const MeasureSession& session, CpuPowerSampler& cpu_sampler,
                  Timestamp last_cpu, Timestamp end);

}  // namespace zeus::cli
