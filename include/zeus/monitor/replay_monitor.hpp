// Energy windows replayed from a CSV window log (the format EnergyMonitor and
// the original write): what-if analysis of recorded runs, and tests that feed
// real measurements to code that expects a live monitor.
//
//   auto monitor = zeus::ReplayMonitor::open("A40+resnet50+gpu0.csv").value();
//   monitor->begin_window("__GlobalPowerLimitOptimizer_300");
//   Measurement m = monitor->end_window("__GlobalPowerLimitOptimizer_300").value();  // the logged row
//
// Each end_window returns the next logged row; its name must be the window's.
// A cancelled window consumes no row (cancelled windows are never logged).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "zeus/monitor/energy_monitor.hpp"

namespace zeus {

struct LoggedWindow {
    std::string start_time;  // as written (seconds since the epoch)
    std::string name;
    Seconds elapsed{0.0};
    std::vector<Joules> gpu_energy;  // in the order of WindowLogContents::gpu_indices
};

struct WindowLogContents {
    std::vector<unsigned> gpu_indices;  // from the gpu<i>_energy columns
    std::vector<LoggedWindow> windows;
};

// Errors name the file, the line and what is wrong with it.
[[nodiscard]] Result<WindowLogContents> read_window_log(const std::filesystem::path& path);

class ReplayMonitor final : public EnergyMonitor {
  public:
    [[nodiscard]] static Result<std::unique_ptr<ReplayMonitor>> open(const std::filesystem::path& log);
    explicit ReplayMonitor(WindowLogContents contents);

    Status begin_window(std::string_view name, bool sync = true, bool restart = false) override;
    // NoData once every row has been replayed; InvalidState when the next
    // row belongs to another window.
    Result<Measurement> end_window(std::string_view name, bool sync = true, bool cancel = false) override;
    std::vector<std::string> reset_windows() override;
    [[nodiscard]] std::vector<std::string> open_windows() const override;
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return contents_.gpu_indices; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return no_cpus_; }

    [[nodiscard]] std::size_t rows_left() const { return contents_.windows.size() - next_row_; }

  private:
    WindowLogContents contents_;
    std::size_t next_row_ = 0;
    std::vector<std::string> open_;
    std::vector<unsigned> no_cpus_;
};

}  // namespace zeus
