// Energy windows (the original's ZeusMonitor): "how many joules and seconds
// did this part of my program take, on each GPU and CPU package?"
//
//   zeus::Gpus gpus = zeus::Gpus::open(zeus::GpuOptions::from_environment().value());
//   zeus::Cpus cpus = zeus::Cpus::open(zeus::CpuOptions::from_environment().value());
//   auto monitor = zeus::EnergyMonitor::open(gpus, &cpus, nullptr).value();
//   monitor->begin_window("step").value();
//   train_step();
//   zeus::Measurement m = monitor->end_window("step").value();
//
// Named windows may nest and overlap, and may be begun and ended from
// different threads. GPUs with an energy counter are read at the window's
// edges; GPUs without one are measured by integrating a power timeline.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"
#include "zeus/monitor/measurement.hpp"
#include "zeus/platform/error.hpp"

namespace zeus {

// Waits until the listed GPUs have finished the work queued on them, so that
// a window's edges are where the program thinks they are.
using SyncFunction = std::function<void(const std::vector<unsigned>& gpu_indices)>;

// Synchronises CUDA devices through the CUDA runtime, loaded at run time
// (cudaSetDevice + cudaDeviceSynchronize). Error when no CUDA runtime is found.
[[nodiscard]] Result<SyncFunction> cuda_sync();

// Where a window's edges take each GPU's energy from.
enum class WindowEdges {
    // Each edge reads every GPU's energy counter on the caller's thread: one
    // driver call per GPU per edge (~20 µs each on recent drivers). What the
    // original Zeus does.
    Synchronous,
    // The default. Each edge takes the latest sample of a watcher thread, which reads every
    // counter just after it refreshes (period inferred per GPU), plus power ×
    // the time since the counter's refresh: an edge reads a clock and a
    // pointer and never calls the driver. Accuracy and error bound are those
    // of a synchronous read except in the ~1 ms after each refresh, when the
    // sample is one refresh older (docs/monitoring.md, "Window edges").
    // CPU packages (RAPL) and the SoC are read by the same thread every 5
    // and 20 ms, and an edge extrapolates the latest reading with the power
    // since the one before (bounded by the package's power ceiling,
    // Cpu::power_ceiling). A device that fails at the watcher's read is
    // reported lost in the result, not as an error of end_window; a GPU
    // whose sample is late at an edge (the watcher stalled) is read by that
    // edge itself, and lost if that read fails. Falls
    // back to Synchronous on the simulator's virtual clock and with
    // wait_for_counter_refresh (which waits for the counters themselves).
    Sampled,
};

struct EnergyMonitorOptions {
    std::optional<std::vector<unsigned>> gpu_indices;  // nullopt = every available GPU
    std::optional<std::vector<unsigned>> cpu_indices;  // nullopt = every readable CPU package
    // For GPUs that measure zero (window shorter than the counter's update
    // period): use instant power × time instead, marked as an approximation.
    bool approx_instant_energy = false;
    std::optional<std::string> log_file;  // CSV in the original's format; appended to, another file refused
    SyncFunction sync;                    // empty: no synchronisation
    // At each window edge, wait for the energy counters' next two refreshes
    // (about 200 ms) and take the edge from them: the counter at the first
    // refresh minus the power after the edge (the counter's own rate between
    // the two) times the time from the edge to it. Without waiting, the edge
    // adds power × time since the last refresh with a power reading that may
    // predate a change just before the edge (up to ~5% of a 1 s window).
    // For callers with nothing to do right after an edge (`zeus run`).
    bool wait_for_counter_refresh = false;
    WindowEdges edges = WindowEdges::Sampled;
};

class EnergyMonitor {
  public:
    // `gpus`, `cpus` and `soc` must outlive the monitor (cpus and soc may be null).
    static Result<std::unique_ptr<EnergyMonitor>> open(const Gpus& gpus, const Cpus* cpus, const Soc* soc,
                                                       EnergyMonitorOptions options = {});
    virtual ~EnergyMonitor() = default;

    // Windows the library opens for itself on a user's monitor (the carbon and
    // cost monitors' hourly segments) are named with this prefix; they are
    // measured like any other but never written to the window log.
    static constexpr std::string_view kInternalWindowPrefix = "__zeus_internal:";

    // Errors: InvalidState for a name already open (unless restart), and
    // device read errors.
    virtual Status begin_window(std::string_view name, bool sync = true, bool restart = false) = 0;
    // Errors: NotFound for a name that is not open. cancel = true closes the
    // window without measuring or logging it (the values are zero).
    virtual Result<Measurement> end_window(std::string_view name, bool sync = true, bool cancel = false) = 0;
    // Drops every open window; returns their names.
    virtual std::vector<std::string> reset_windows() = 0;
    [[nodiscard]] virtual std::vector<std::string> open_windows() const = 0;

    [[nodiscard]] virtual const std::vector<unsigned>& gpu_indices() const = 0;
    [[nodiscard]] virtual const std::vector<unsigned>& cpu_indices() const = 0;

    // Stops and joins the monitor's background threads, for a host that
    // must end them before its own teardown (the Python package at
    // interpreter exit). Windows keep working from their edge reads alone.
    // Idempotent.
    virtual void stop_threads() {}
};

// A window that ends when it goes out of scope (its measurement is then
// discarded unless end() was called).
class ScopedWindow {
  public:
    ScopedWindow(EnergyMonitor& monitor, std::string name, bool sync = true);
    ScopedWindow(const ScopedWindow&) = delete;
    ScopedWindow& operator=(const ScopedWindow&) = delete;
    ~ScopedWindow();

    [[nodiscard]] const Status& status() const { return begun_; }
    Result<Measurement> end();

  private:
    EnergyMonitor& monitor_;
    std::string name_;
    bool sync_;
    Status begun_;
    bool ended_ = false;
};

}  // namespace zeus
