// One job's or step's GPU energy on one node: the counters of exactly its
// GPUs read through zeusd at its start and its end, the JSON record written
// to the spool directory, and the line shown in the job's stderr. Where it
// holds whole CPU packages (cpu_packages.hpp), their RAPL package and DRAM
// counters are read through zeusd's cpu-read API in the same window.
//
// Nothing here needs privileges beyond writing the spool: the counters come
// from zeusd, so the plugin never opens NVML inside slurmstepd. When a
// reading fails (zeusd down, a GPU it does not know, a counter that went
// back), the record keeps the reason instead of a number.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/cpu_packages.hpp"
#include "slurm/gpu_selection.hpp"
#include "slurm/plugin_options.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus::slurm {

// Slurm's names for the step: "0", "1", ..., "batch", "interactive"; "job"
// for the job's own record (prolog to epilog).
struct RecordIdentity {
    std::uint32_t job_id = 0;
    std::string step;
    std::string node;
    std::uint32_t uid = 0;
};

using CpuCounters = std::map<unsigned, Microjoules>;  // by package (zeusd's CPU id)

// The CPU packages' counters at the window's start (zeusd's cumulative
// microjoules), or why there are none.
struct CpuWindowStart {
    PackageHolding holding;
    std::optional<CpuCounters> package;  // nullopt: see reason
    std::optional<CpuCounters> dram;     // read only when the step holds the whole node
    std::string reason;                  // why package or DRAM is not measured
};

// The counters at the window's start, or why there are none.
struct WindowStart {
    std::chrono::system_clock::time_point time;
    GpuSelection gpus;
    std::optional<std::map<unsigned, Millijoules>> counters;
    std::string reason;    // set when counters is nullopt
    bool no_gpus = false;  // none were allocated: nothing to measure, no record, no line
    CpuWindowStart cpu;
};

// How a task of the step ended (waitpid's status decoded).
struct TaskEnd {
    int task_id = 0;
    std::optional<int> exit_code;  // exited
    std::optional<int> signal;     // killed by a signal
};

struct EnergyRecord {
    RecordIdentity identity;
    WindowStart start;
    std::chrono::system_clock::time_point end;
    std::optional<std::map<unsigned, Millijoules>> energy;  // per GPU; nullopt: see reason
    std::string reason;
    std::optional<CpuCounters> cpu_energy;   // per package held whole; nullopt: see cpu_reason
    std::optional<CpuCounters> dram_energy;  // per package, when the step held the whole node
    std::string cpu_reason;
    std::vector<TaskEnd> tasks;
};

// Reads the selected GPUs' cumulative energy through zeusd now, and the
// packages' of `holding`. With no GPUs selected there is nothing to read, and
// the reason says so.
[[nodiscard]] WindowStart begin_window(const ZeusdConfig& zeusd, GpuSelection gpus, PackageHolding holding);
// A start that could not be taken at all (bad options, bad GPU list).
[[nodiscard]] WindowStart failed_window(std::string reason);
// Reads the counters again and subtracts.
[[nodiscard]] EnergyRecord end_window(const ZeusdConfig& zeusd, RecordIdentity identity, WindowStart start);

// The record as JSON (schema "zeus-slurm-record/1", docs/slurm.md).
[[nodiscard]] std::string record_json(const EnergyRecord& record);
// A window's start as JSON and back, for the job's record, whose start (the
// prolog) and end (the epilog) are different processes.
[[nodiscard]] std::string window_start_json(const WindowStart& start);
[[nodiscard]] Result<WindowStart> parse_window_start(const std::string& json);

// <spool>/job-<id>/<step>.<node>.json ("job.<node>.json" for the job).
[[nodiscard]] std::string record_path(const std::string& spool, const RecordIdentity& identity);
// Where the prolog leaves the job's start for the epilog.
[[nodiscard]] std::string job_start_path(const std::string& spool, const RecordIdentity& identity);

// Writes `text` to `path` whole or not at all (a temporary file renamed),
// creating the job's folder.
Status write_file_atomically(const std::string& path, const std::string& text);

// "zeus: job 12 step 0 on node1: GPUs 0,1: 1234.567 J in 5.02 s (NOTE)" or,
// without a number, the reason; NOTE says where the record is ("record PATH").
// A step holding whole packages adds "; CPU packages 0,1: 300.000 J, DRAM:
// 40.000 J" before the note (or why they are not measured); others add nothing.
[[nodiscard]] std::string stderr_line(const EnergyRecord& record, const std::string& note);

}  // namespace zeus::slurm
