// The Chrome/Perfetto trace writer: valid JSON in the trace-event format,
// timestamps in order, one counter track per device, and a span covering the
// measured window.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "trace_writer.hpp"

namespace zeus::cli {
namespace {

using std::chrono::milliseconds;

// Perfetto names a counter track "<name> <arg key>".
std::map<std::string, std::vector<std::pair<double, double>>> counter_tracks(const nlohmann::json& trace) {
    std::map<std::string, std::vector<std::pair<double, double>>> tracks;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "C") continue;
        for (const auto& [key, value] : e["args"].items()) {
            tracks[e["name"].get<std::string>() + " " + key].emplace_back(e["ts"].get<double>(), value.get<double>());
        }
    }
    return tracks;
}

void expect_well_formed(const nlohmann::json& trace) {
    ASSERT_TRUE(trace.is_object());
    ASSERT_TRUE(trace.contains("traceEvents"));
    ASSERT_TRUE(trace["traceEvents"].is_array());
    double last_ts = -1;
    bool metadata_done = false;
    for (const auto& e : trace["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e.contains("name") && e.contains("pid") && e.contains("ts")) << e.dump();
        if (e["ph"] == "M") {
            EXPECT_FALSE(metadata_done) << "metadata comes first";
            continue;
        }
        metadata_done = true;
        const double ts = e["ts"].get<double>();
        EXPECT_GE(ts, 0.0) << e.dump();
        EXPECT_GE(ts, last_ts) << "timestamps must not go backwards: " << e.dump();
        last_ts = ts;
        if (e["ph"] == "X") {
            EXPECT_GE(e["dur"].get<double>(), 0.0);
        }
    }
}

TEST(TraceWriter, WritesValidTraceEventJson) {
    TraceWriter writer("zeus run: sleep 1");
    writer.add_power("GPU 1", 500.0, 70.5);  // out of order on purpose
    writer.add_power("GPU 0", 0.0, 60.0);
    writer.add_power("GPU 0", 250.0, 250.25);
    writer.add_power("GPU 1", 0.0, 55.0);
    writer.add_track("CPU 0");
    writer.add_span("sleep 1", 0.0, 1000.0, {{"energy_j", {{"GPU 0", 0.2}}}});
    writer.set_other_data("command", {"sleep", "1"});

    std::ostringstream text;
    ASSERT_TRUE(writer.write(text).ok());
    const auto trace = nlohmann::json::parse(text.str());
    expect_well_formed(trace);
    EXPECT_EQ(trace["displayTimeUnit"], "ms");
    EXPECT_EQ(trace["otherData"]["command"][0], "sleep");

    // Process and thread names.
    std::set<std::string> metadata;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "M") metadata.insert(e["name"].get<std::string>() + "=" + e["args"]["name"].get<std::string>());
    }
    EXPECT_TRUE(metadata.count("process_name=zeus run: sleep 1")) << trace.dump(1);
    EXPECT_TRUE(metadata.count("thread_name=measured window")) << trace.dump(1);

    const auto tracks = counter_tracks(trace);
    ASSERT_EQ(tracks.size(), 2U);
    ASSERT_TRUE(tracks.count("GPU 0 power (W)"));
    EXPECT_EQ(tracks.at("GPU 0 power (W)"), (std::vector<std::pair<double, double>>{{0.0, 60.0}, {250.0, 250.25}}));
    EXPECT_EQ(tracks.at("GPU 1 power (W)"), (std::vector<std::pair<double, double>>{{0.0, 55.0}, {500.0, 70.5}}));
    EXPECT_EQ(writer.tracks(), (std::vector<std::string>{"GPU 1", "GPU 0", "CPU 0"}));
}

TEST(TraceWriter, DropsValuesJsonCannotHold) {
    TraceWriter writer("p");
    writer.add_power("GPU 0", 0.0, std::numeric_limits<double>::quiet_NaN());
    writer.add_power("GPU 0", 1.0, std::numeric_limits<double>::infinity());
    writer.add_power("GPU 0", 2.0, 10.0);
    const auto tracks = counter_tracks(writer.to_json());
    ASSERT_EQ(tracks.at("GPU 0 power (W)").size(), 1U);
    // And the text is strict JSON (nlohmann would write NaN as null, never as NaN).
    EXPECT_EQ(writer.to_json().dump().find("NaN"), std::string::npos);
}

TEST(TraceWriter, WriteFileNamesAnUnwritablePath) {
    TraceWriter writer("p");
    const auto status = writer.write_file("/nonexistent-dir/trace.json");
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message.find("/nonexistent-dir/trace.json"), std::string::npos);
    EXPECT_NE(status.error().message.find("--trace"), std::string::npos);
}

TEST(TraceRecorder, TimelineIsClippedToTheWindowAndHeldToItsEnd) {
    const Timestamp origin = MonitorClock::now();
    TraceRecorder recorder("zeus power", origin);
    const std::vector<PowerSample> samples = {
        {origin - milliseconds(300), Watts(50.0)},  // before the window: superseded
        {origin - milliseconds(100), Watts(60.0)},  // in force when the window starts
        {origin + milliseconds(200), Watts(300.0)},
        {origin + milliseconds(700), Watts(280.0)},
        {origin + milliseconds(1500), Watts(90.0)},  // after the end: left out
    };
    const Timestamp end = origin + milliseconds(1000);
    recorder.add_timeline("GPU 0", samples, end);
    EnergyReport report;
    report.time_s = 1.0;
    report.devices.push_back({"GPU 0", "gpu", 0U, "sim", 250.0, "energy_counter", {}});
    report.devices.push_back({"CPU 0", "cpu", 0U, "package-0", 30.0, "energy_counter", {}});
    recorder.add_interval_power("CPU 0", origin, 25.0);
    recorder.add_interval_power("CPU 0", origin + milliseconds(500), 35.0);
    recorder.finish(end);
    recorder.add_window("train", origin, end, report);

    const auto trace = recorder.writer().to_json();
    expect_well_formed(trace);
    const auto tracks = counter_tracks(trace);
    EXPECT_EQ(tracks.at("GPU 0 power (W)"),
              (std::vector<std::pair<double, double>>{{0.0, 60.0}, {200000.0, 300.0}, {700000.0, 280.0}, {1e6, 280.0}}));
    EXPECT_EQ(tracks.at("CPU 0 power (W)"),
              (std::vector<std::pair<double, double>>{{0.0, 25.0}, {500000.0, 35.0}, {1e6, 35.0}}));

    // The span covers the window and every counter sample lies inside it.
    int spans = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        ++spans;
        EXPECT_EQ(e["name"], "train");
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0);
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1e6);
        EXPECT_DOUBLE_EQ(e["args"]["energy_j"]["GPU 0"].get<double>(), 250.0);
        EXPECT_DOUBLE_EQ(e["args"]["energy_j"]["CPU 0"].get<double>(), 30.0);
        EXPECT_DOUBLE_EQ(e["args"]["total_energy_j"].get<double>(), 280.0);
        for (const auto& [name, points] : tracks) {
            for (const auto& [ts, w] : points) {
                EXPECT_GE(ts, e["ts"].get<double>()) << name;
                EXPECT_LE(ts, e["ts"].get<double>() + e["dur"].get<double>()) << name;
            }
        }
    }
    EXPECT_EQ(spans, 1);
}

TEST(TraceRecorder, ConstantPowerBeforeTheWindowStillShows) {
    const Timestamp origin = MonitorClock::now();
    TraceRecorder recorder("p", origin);
    // A steady GPU: the monitor stored one sample, before the window began.
    recorder.add_timeline("GPU 0", {{origin - milliseconds(50), Watts(42.0)}}, origin + milliseconds(400));
    const auto tracks = counter_tracks(recorder.writer().to_json());
    EXPECT_EQ(tracks.at("GPU 0 power (W)"), (std::vector<std::pair<double, double>>{{0.0, 42.0}, {400000.0, 42.0}}));
}

TEST(TraceRecorder, FileRoundTrips) {
    const auto path = std::filesystem::temp_directory_path() / ("zeus-trace-" + std::to_string(::getpid()) + ".json");
    TraceRecorder recorder("p", MonitorClock::now());
    recorder.add_interval_power("CPU 0", recorder.origin(), 12.5);
    ASSERT_TRUE(recorder.writer().write_file(path.string()).ok());
    std::ifstream in(path);
    const auto trace = nlohmann::json::parse(in);
    std::filesystem::remove(path);
    expect_well_formed(trace);
    EXPECT_EQ(counter_tracks(trace).at("CPU 0 power (W)").front().second, 12.5);
}

}  // namespace
}  // namespace zeus::cli
