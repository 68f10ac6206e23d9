// The measurement report (zeus/report/measurement_report.hpp): the formats
// `zeus power|energy|run` and zeus_native's Measurement.to_json/to_csv write,
// as pure functions of plain data.
#include "zeus/report/measurement_report.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <algorithm>
#include <sstream>

namespace zeus::report {
namespace {

EnergyReport sample_report() {
    EnergyReport r;
    r.command_name = "run";
    r.command = {"python", "train.py", "--epochs 3"};
    r.child = ChildStatus{true, 0, 0};
    r.start_time = WallTime(std::chrono::milliseconds(1'700'000'000'123));
    r.time_s = 2.0;
    r.devices.push_back({"GPU 0", "gpu", 0U, "NVIDIA A100-SXM4-40GB", 500.0, "energy_counter", {}});
    r.devices.push_back({"GPU 1", "gpu", 1U, "Tesla P100, PCIe", 100.0, "integrated_power", {"short window"}});
    r.devices.push_back({"CPU 0", "cpu", 0U, "package-0", 60.0, "energy_counter", {}});
    r.devices.push_back({"SoC gpu", "soc", std::nullopt, "NVIDIA Jetson", 5.0, "integrated_power", {}});
    return r;
}

TEST(MeasurementReport, HumanTableHasEveryDeviceTotalAndWarnings) {
    const std::string text = render_report(sample_report(), OutputFormat::Human);
    EXPECT_NE(text.find("Command:  python train.py '--epochs 3'"), std::string::npos) << text;
    EXPECT_NE(text.find("Status:   exited with code 0"), std::string::npos) << text;
    EXPECT_NE(text.find("Time:     2.000 s"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU 0"), std::string::npos) << text;
    EXPECT_NE(text.find("250.00  energy counter"), std::string::npos) << text;
    EXPECT_NE(text.find("integrated power"), std::string::npos) << text;
    // The SoC overlaps the GPUs and CPUs: not in the total.
    EXPECT_NE(text.find("660.000"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU 1: short window"), std::string::npos) << text;
}

TEST(MeasurementReport, CsvQuotesFieldsAndHasOneRowPerDevice) {
    const std::string text = render_report(sample_report(), OutputFormat::Csv);
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "device,kind,index,name,time_s,energy_j,average_power_w,source,warnings,simulated");
    std::vector<std::string> rows;
    while (std::getline(lines, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 4U);
    EXPECT_EQ(rows[0], "GPU 0,gpu,0,NVIDIA A100-SXM4-40GB,2.000000,500.000000,250.000000,energy_counter,,false");
    EXPECT_EQ(rows[1].substr(0, 30), "GPU 1,gpu,1,\"Tesla P100, PCIe\"");
    EXPECT_EQ(rows[3].substr(0, 15), "SoC gpu,soc,,NV");
    EXPECT_EQ(csv_field("a\"b"), "\"a\"\"b\"");
}

// A device warning can quote a file name or an argument: every format keeps
// the report (JSON and CSV with U+FFFD, the human report escaped), where
// nlohmann's dump() used to throw type_error.316.
TEST(MeasurementReport, TextThatIsNotUtf8IsReplacedOrEscapedInEveryFormat) {
    EnergyReport r = sample_report();
    r.command = {"tar", "cf", "\xFF.tar", "\x1b[2J"};
    r.devices[0].warnings = {"read \xFF.csv"};
    const std::string replaced = "\xEF\xBF\xBD";
    const auto json = nlohmann::json::parse(render_report(r, OutputFormat::Json));
    EXPECT_EQ(json["argv"][2], replaced + ".tar");
    EXPECT_EQ(json["devices"][0]["warnings"][0], "read " + replaced + ".csv");
    const auto line = nlohmann::json::parse(render_report(r, OutputFormat::Json, true));
    EXPECT_EQ(line["argv"][3], "\x1b[2J");  // JSON escapes it as \u001b
    const std::string csv = render_report(r, OutputFormat::Csv);
    EXPECT_NE(csv.find(",read " + replaced + ".csv,"), std::string::npos) << csv;
    EXPECT_EQ(csv_field("a\xFF,b"), "\"a" + replaced + ",b\"");
    const std::string human = render_report(r, OutputFormat::Human);
    EXPECT_NE(human.find("Command:  tar cf \\xff.tar \\e[2J\n"), std::string::npos) << human;
    EXPECT_NE(human.find("GPU 0: read \\xff.csv"), std::string::npos) << human;
    EXPECT_EQ(human.find('\x1b'), std::string::npos) << human;
}

TEST(MeasurementReport, JsonCarriesExitStatusAndEnergies) {
    EnergyReport r = sample_report();
    r.child = ChildStatus{false, 0, SIGINT};
    r.interrupted_by = SIGINT;
    const auto j = nlohmann::json::parse(render_report(r, OutputFormat::Json));
    EXPECT_EQ(j["command"], "run");
    EXPECT_EQ(j["argv"][2], "--epochs 3");
    EXPECT_EQ(j["exit_code"], 130);
    EXPECT_EQ(j["signal"], "SIGINT");
    EXPECT_TRUE(j["interrupted"].get<bool>());
    EXPECT_EQ(j["start_time"], "2023-11-14T22:13:20.123Z");
    EXPECT_DOUBLE_EQ(j["devices"][0]["average_power_w"].get<double>(), 250.0);
    EXPECT_TRUE(j["devices"][3]["index"].is_null());
    EXPECT_DOUBLE_EQ(j["total_energy_j"].get<double>(), 660.0);
    const auto line = render_report(r, OutputFormat::Json, true);
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
    EXPECT_EQ(nlohmann::json::parse(line)["type"], "summary");
}

TEST(MeasurementReport, PowerRowsInEveryFormat) {
    const std::vector<std::string> devices = {"GPU 0", "CPU 0"};
    const PowerRow row{WallTime(std::chrono::seconds(1'700'000'000)), 1.5, {231.44, std::nullopt}};
    EXPECT_EQ(render_power_header(devices, OutputFormat::Csv), "timestamp,elapsed_s,GPU 0 power (W),CPU 0 power (W)\n");
    EXPECT_EQ(render_power_header(devices, OutputFormat::Human), "");
    EXPECT_EQ(render_power_row(devices, row, OutputFormat::Csv), "2023-11-14T22:13:20.000Z,1.500,231.440,\n");
    const auto j = nlohmann::json::parse(render_power_row(devices, row, OutputFormat::Json));
    EXPECT_EQ(j["type"], "power");
    EXPECT_DOUBLE_EQ(j["power_w"]["GPU 0"].get<double>(), 231.44);
    EXPECT_TRUE(j["power_w"]["CPU 0"].is_null());
    const auto human = render_power_row(devices, row, OutputFormat::Human);
    EXPECT_NE(human.find("GPU 0: 231.4 W  CPU 0: n/a"), std::string::npos) << human;
}

// Local times carry their offset from UTC: the hour a DST change repeats is otherwise ambiguous.
TEST(MeasurementReport, LocalTimesCarryTheirUtcOffset) {
    const char* saved = std::getenv("TZ");
    const std::string previous = saved != nullptr ? saved : "";
    ::setenv("TZ", "Europe/Berlin", 1);
    ::tzset();
    // 2023-10-29 01:30 UTC and 00:30 UTC are both 02:30 in Berlin (the repeated hour).
    const auto first = WallTime(std::chrono::seconds(1'698'539'400));
    const auto second = first + std::chrono::hours(1);
    EXPECT_EQ(local_time(first), "2023-10-29 02:30:00.000 +0200");
    EXPECT_EQ(local_time(second), "2023-10-29 02:30:00.000 +0100");
    if (saved != nullptr) {
        ::setenv("TZ", previous.c_str(), 1);
    } else {
        ::unsetenv("TZ");
    }
    ::tzset();
}

// A wall clock past April 2262, where std::chrono::system_clock's int64
// nanoseconds overflow (a window begun in 2300 read as 1715): written as it is.
TEST(MeasurementReport, TimesPast2262AreWrittenAsTheyAre) {
    using namespace std::chrono;
    const WallTime in_2300 = WallTime(sys_days(year(2300) / January / 1).time_since_epoch() + milliseconds(123));
    Measurement m;
    m.start_time = in_2300;
    const Gpus no_gpus;
    const auto j = nlohmann::json::parse(
        render_report(measurement_report(m, "energy", no_gpus, nullptr, nullptr), OutputFormat::Json));
    EXPECT_EQ(j["start_time"], "2300-01-01T00:00:00.123Z");
    const PowerRow row{in_2300, 0.5, {1.0}};
    EXPECT_EQ(render_power_row({"GPU 0"}, row, OutputFormat::Csv).substr(0, 24), "2300-01-01T00:00:00.123Z");
}

TEST(MeasurementReport, AMeasurementBecomesOneRowPerDeviceWithItsSource) {
    Measurement m;
    m.start_time = WallTime(std::chrono::seconds(1'700'000'000));
    m.time = Seconds(4.0);
    m.gpu_energy[0] = EnergyValue{Joules(10.0), EnergySource::HardwareCounter, {}, false};
    m.gpu_energy[1] = EnergyValue{Joules(0.0), EnergySource::HardwareCounter, {"GPU 1 stopped answering"}, true};
    m.cpu_energy[0] = EnergyValue{Joules(6.0), EnergySource::IntegratedPower, {}, false};
    m.soc_energy["gpu"] = EnergyValue{Joules(2.0), EnergySource::InstantPowerApproximation, {}, false};
    m.warnings = {"window warning"};
    const Gpus no_gpus;
    const EnergyReport r = measurement_report(m, "energy", no_gpus, nullptr, nullptr);
    ASSERT_EQ(r.devices.size(), 4U);
    EXPECT_EQ(r.devices[0].device, "GPU 0");
    EXPECT_EQ(r.devices[1].device, "GPU 1");
    EXPECT_TRUE(r.devices[1].lost);
    EXPECT_EQ(r.devices[1].source, "lost");  // one definition for every format
    EXPECT_EQ(r.devices[2].device, "CPU 0");
    EXPECT_EQ(r.devices[2].source, "integrated_power");
    EXPECT_EQ(r.devices[3].device, "SoC gpu");
    EXPECT_EQ(r.devices[3].source, "instant_power_approximation");
    EXPECT_FALSE(r.devices[3].index.has_value());
    EXPECT_FALSE(r.simulated);  // no simulated GPU set behind it
    // The lost GPU and the SoC (it overlaps the rest) stay out of the total.
    EXPECT_DOUBLE_EQ(r.total_energy_j(), 16.0);
    const auto j = nlohmann::json::parse(render_report(r, OutputFormat::Json));
    EXPECT_EQ(j["command"], "energy");
    EXPECT_EQ(j["start_time"], "2023-11-14T22:13:20.000Z");
    EXPECT_TRUE(j["devices"][1]["energy_j"].is_null());
    EXPECT_EQ(j["devices"][1]["source"], "lost");  // as the CSV says
    EXPECT_TRUE(j["devices"][1]["lost"].get<bool>());
    EXPECT_DOUBLE_EQ(j["devices"][0]["average_power_w"].get<double>(), 2.5);
    EXPECT_EQ(j["warnings"][0], "window warning");
    EXPECT_FALSE(j.contains("exit_code"));  // only `run` reports a command's status
    const std::string csv = render_report(r, OutputFormat::Csv);
    EXPECT_NE(csv.find("GPU 1,gpu,1,,4.000000,,,lost,GPU 1 stopped answering,false"), std::string::npos) << csv;
}

TEST(MeasurementReport, FormatsAreParsedWithTheOptionInTheError) {
    EXPECT_EQ(parse_output_format("--format", "json").value(), OutputFormat::Json);
    const auto bad = parse_output_format("--format", "yaml");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("--format yaml"), std::string::npos);
    EXPECT_NE(bad.error().hint.find("human, csv or json"), std::string::npos);
}

TEST(MeasurementReport, ChildStatusIsPlainData) {
    EXPECT_EQ((ChildStatus{true, 3, 0}).shell_exit_code(), 3);
    EXPECT_EQ((ChildStatus{false, 0, SIGKILL}).shell_exit_code(), 128 + SIGKILL);
    EXPECT_EQ((ChildStatus{false, 0, SIGKILL}).describe(), "killed by signal 9 (SIGKILL)");
    EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
}

}  // namespace
}  // namespace zeus::report
