// The energy-window object shared by the monitor, optimizer and profiler bindings.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "bindings.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::python {

// ZeusMonitor's native base: the C++ monitor and the Python objects it
// depends on (device sets, the framework sync callable), kept alive with it.
struct EnergyWindows {
    nb::object gpus_owner;
    nb::object cpus_owner;
    nb::object soc_owner;
    std::unique_ptr<EnergyMonitor> monitor;
    nb::object sync;  // callable(list[int]) or None
    bool approx = false;
    nb::list gpu_index_list;
    bool warned_zero = false;  // the zero-energy warning is given once per monitor
    // A framework sync that failed inside a window the C++ core opened (the
    // power-limit optimizer's), kept for the binding to raise once the call
    // returns: the core's sync hook cannot fail.
    std::optional<nb::python_error> sync_error{};

    void rethrow_sync_error() {
        if (!sync_error) return;
        nb::python_error error = std::move(*sync_error);
        sync_error.reset();
        throw error;
    }

    void begin(std::string_view key, bool sync_execution, bool restart);
    Measurement end(std::string_view key, bool sync_execution, bool cancel);
    // The warnings about a window's result, given by end_window as the
    // original's: GPUs lost during it, a GPU measured as zero (once per
    // monitor). Computes the result's GPU values where they were deferred.
    void warn_about(const Measurement& m, std::string_view key);
    double native_pairs(std::size_t count);
    double native_reads(std::size_t count) const;

    [[nodiscard]] const Gpus& gpus() const;
};

}  // namespace zeus::python
