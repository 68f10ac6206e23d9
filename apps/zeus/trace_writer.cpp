#include "trace_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "zeus/platform/utf8.hpp"

namespace zeus::cli {
namespace {

// Microseconds with nanosecond resolution, without binary noise in the file.
double round_us(double us) { return std::round(us * 1000.0) / 1000.0; }

}  // namespace

TraceWriter::TraceWriter(std::string process_name) : process_name_(std::move(process_name)) {}

void TraceWriter::add_track(const std::string& device) {
    if (std::find(tracks_.begin(), tracks_.end(), device) == tracks_.end()) tracks_.push_back(device);
}

void TraceWriter::add_power(const std::string& device, double ts_us, double watts) {
    add_track(device);
    if (!std::isfinite(watts) || !std::isfinite(ts_us)) return;  // JSON has no NaN
    const double ts = round_us(ts_us);
    events_.push_back({ts, nlohmann::json{{"name", device},
                                          {"ph", "C"},
                                          {"ts", ts},
                                          {"pid", kPid},
                                          {"tid", kWindowTid},
                                          {"args", {{kPowerCounterKey, std::round(watts * 1000.0) / 1000.0}}}}});
}

void TraceWriter::add_span(std::string name, double start_us, double duration_us, nlohmann::json args) {
    const double ts = round_us(start_us);
    events_.push_back({ts, nlohmann::json{{"name", std::move(name)},
                                          {"cat", "zeus"},
                                          {"ph", "X"},
                                          {"ts", ts},
                                          {"dur", round_us(std::max(0.0, duration_us))},
                                          {"pid", kPid},
                                          {"tid", kWindowTid},
                                          {"args", std::move(args)}}});
}

void TraceWriter::set_other_data(const std::string& key, nlohmann::json value) { other_data_[key] = std::move(value); }

nlohmann::json TraceWriter::to_json() const {
    nlohmann::json events = nlohmann::json::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"ts", 0}, {"pid", kPid}, {"tid", kWindowTid},
                      {"args", {{"name", process_name_}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", kPid}, {"tid", kWindowTid},
                      {"args", {{"name", "measured window"}}}});
    std::vector<const Event*> ordered;
    ordered.reserve(events_.size());
    for (const auto& e : events_) ordered.push_back(&e);
    std::stable_sort(ordered.begin(), ordered.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
    for (const auto* e : ordered) events.push_back(e->json);
    nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    if (!other_data_.empty()) trace["otherData"] = other_data_;
    return trace;
}

Status TraceWriter::write(std::ostream& out) const {
    out << json_text(to_json(), 1) << "\n";
    out.flush();
    if (!out) return Error{ErrorCode::OperatingSystem, "cannot write the trace", ""};
    return {};
}

Status TraceWriter::write_file(const std::string& path) const {
    std::ofstream file(path, std::ios::out | std::ios::trunc);
    if (!file) {
        return Error{ErrorCode::OperatingSystem,
                     fmt::format("--trace {}: cannot write the file: {}", path, std::strerror(errno)),
                     "give a path in an existing directory that you may write to"};
    }
    auto status = write(file);
    if (!status) {
        return Error{ErrorCode::OperatingSystem, fmt::format("--trace {}: writing failed", path),
                     "check the free space"};
    }
    return {};
}

TraceRecorder::TraceRecorder(std::string process_name, Timestamp origin)
    : writer_(std::move(process_name)), origin_(origin) {}

double TraceRecorder::us(Timestamp t) const { return std::chrono::duration<double, std::micro>(t - origin_).count(); }

void TraceRecorder::add_interval_power(const std::string& device, Timestamp from, double watts) {
    writer_.add_power(device, std::max(0.0, us(from)), watts);
    last_interval_value_[device] = watts;
}

void TraceRecorder::add_timeline(const std::string& device, const std::vector<PowerSample>& samples, Timestamp end) {
    writer_.add_track(device);
    std::optional<double> held;  // the value in force at the origin
    std::optional<double> last;
    for (const auto& s : samples) {
        if (s.time < origin_) {
            held = s.power.count();
            continue;
        }
        if (s.time > end) break;
        if (held) {
            writer_.add_power(device, 0.0, *held);
            held.reset();
        }
        writer_.add_power(device, us(s.time), s.power.count());
        last = s.power.count();
    }
    if (held) {
        writer_.add_power(device, 0.0, *held);
        last = held;
    }
    if (last) writer_.add_power(device, us(end), *last);
}

void TraceRecorder::add_window(const std::string& name, Timestamp start, Timestamp end, const EnergyReport& report) {
    nlohmann::json energy = nlohmann::json::object();
    for (const auto& d : report.devices) energy[d.device] = d.energy_j;
    nlohmann::json args = {
        {"time_s", report.time_s}, {"energy_j", energy}, {"total_energy_j", report.total_energy_j()}};
    if (report.child) args["exit_code"] = report.child->shell_exit_code();
    if (report.interrupted_by) args["interrupted_by"] = signal_name(*report.interrupted_by);
    writer_.add_span(name, us(start), us(end) - us(start), std::move(args));
}

void TraceRecorder::finish(Timestamp end) {
    for (const auto& [device, watts] : last_interval_value_) writer_.add_power(device, us(end), watts);
    last_interval_value_.clear();
}

}  // namespace zeus::cli
