// Chrome/Perfetto traces in the JSON trace-event format
// (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
//
// What `zeus power --trace` and `zeus run --trace` write:
// - "M" metadata naming the process ("zeus run: CMD") and the thread that
//   holds the measured window;
// - per device, "C" counter events {"name": "GPU 0", "args": {"power (W)": W}}.
//   Perfetto names a counter track "<name> <arg key>", so the track reads
//   "GPU 0 power (W)"; the legacy chrome://tracing viewer shows a counter
//   "GPU 0" with the series "power (W)". A counter holds its value until the
//   next event, as the power monitor's samples do;
// - one "X" complete event spanning the measured window, whose args hold the
//   time and the energy of every device.
// Timestamps are microseconds since the start of the measurement.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "zeus/monitor/power_monitor.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/report/measurement_report.hpp"

namespace zeus::cli {

using report::EnergyReport;
using report::signal_name;

inline constexpr const char* kPowerCounterKey = "power (W)";

class TraceWriter {
  public:
    // `process_name` is what the trace viewer shows above the tracks.
    explicit TraceWriter(std::string process_name);

    // A power sample of `device` ("GPU 0", "CPU 0") at `ts_us`; the track is
    // created on first use and listed in the order devices first appear.
    void add_power(const std::string& device, double ts_us, double watts);
    // Makes `device` have a track even when it gets no sample (it then shows as empty).
    void add_track(const std::string& device);
    // A complete event on the window thread.
    void add_span(std::string name, double start_us, double duration_us, nlohmann::json args);
    // Free-form data the viewer keeps with the trace (start time, command...).
    void set_other_data(const std::string& key, nlohmann::json value);

    // Metadata first, then every other event in timestamp order.
    [[nodiscard]] nlohmann::json to_json() const;
    Status write(std::ostream& out) const;
    // Writes to a file (truncating it); the error names the path.
    [[nodiscard]] Status write_file(const std::string& path) const;

    [[nodiscard]] const std::vector<std::string>& tracks() const { return tracks_; }

    static constexpr int kPid = 1;
    static constexpr int kWindowTid = 1;

  private:
    struct Event {
        double ts;
        nlohmann::json json;
    };
    std::string process_name_;
    std::vector<std::string> tracks_;
    std::vector<Event> events_;
    nlohmann::json other_data_ = nlohmann::json::object();
};

// Collects what goes into a trace while measuring and writes it at the end.
class TraceRecorder {
  public:
    TraceRecorder(std::string process_name, Timestamp origin);
    [[nodiscard]] Timestamp origin() const { return origin_; }
    [[nodiscard]] double us(Timestamp t) const;
    // Average power over [from, to] shown from `from` on.
    void add_interval_power(const std::string& device, Timestamp from, double watts);
    // A power monitor's samples for one device, clipped to [origin, end]: the
    // value in force at the origin starts the track and the last one is held to the end.
    void add_timeline(const std::string& device, const std::vector<PowerSample>& samples, Timestamp end);
    void add_track(const std::string& device) { writer_.add_track(device); }
    // The measured window [start, end] as a span, with the time and each
    // device's energy (as the energy monitor measured them) in its args.
    void add_window(const std::string& name, Timestamp start, Timestamp end, const EnergyReport& report);
    // The held value of interval tracks continues to `end`.
    void finish(Timestamp end);
    TraceWriter& writer() { return writer_; }

  private:
    TraceWriter writer_;
    Timestamp origin_;
    std::map<std::string, double> last_interval_value_;
};

}  // namespace zeus::cli
