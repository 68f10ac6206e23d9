// CarbonEmissionMonitor and EnergyCostMonitor over a scripted EnergyMonitor
// and clock: windows across UTC hour boundaries, charged at the recorded
// ElectricityMaps intensities served from loopback, with the expected
// amounts summed here from power × time × the recorded values.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "replay_server.hpp"
#include "scripted_energy.hpp"
#include "zeus/carbon/carbon_emission_monitor.hpp"
#include "zeus/carbon/charge_report.hpp"
#include "zeus/carbon/electricity_maps.hpp"
#include "zeus/carbon/energy_cost_monitor.hpp"
#include "zeus/carbon/price_file.hpp"

namespace zeus::carbon {
namespace {

using namespace std::chrono_literals;
using testing::Query;
using testing::ReplayServer;
using testing::ScriptedEnergy;
namespace http = http_server::http;

constexpr double kJoulesPerKwh = 3.6e6;
const UtcTime kDay = std::chrono::sys_days(std::chrono::year(2026) / 11 / 25);  // a Wednesday

class CarbonMonitor : public ::testing::Test {
  protected:
    void SetUp() override {
        recorded_ = testing::shifted_history("carbon_history_file1.json", kDay + 12h);
        server_.on("/v3/carbon-intensity/history", [this](const Query&, const http_server::Request&) {
            return http_server::Response::json(recorded_.dump());
        });
        server_.on("/v3/carbon-intensity/latest", [this](const Query&, const http_server::Request&) {
            return http_server::Response::json(recorded_["history"].back().dump());
        });
    }
    std::shared_ptr<CarbonIntensityProvider> electricity_maps(std::string url = "") {
        ElectricityMapsOptions o;
        o.zone = "US-MIDW-MISO";
        o.base_url = url.empty() ? server_.url() : url;
        o.token = "t";
        return ElectricityMaps::open(o).value();
    }
    HourlyMonitorOptions options() {
        HourlyMonitorOptions o;
        o.poll_interval = 100ms;
        o.clock = [this] { return energy_.now(); };
        return o;
    }
    const nlohmann::json& entry(UtcTime hour) const {
        for (const auto& e : recorded_["history"]) {
            if (testing::parse_recorded_time(e["datetime"]) == hour) return e;
        }
        throw std::runtime_error("no recorded hour " + format_utc(hour));
    }
    double intensity(UtcTime hour) const { return entry(hour)["carbonIntensity"].get<double>(); }

    ScriptedEnergy energy_{kDay + 10h + 40min};
    nlohmann::json recorded_;
    ReplayServer server_;
};

// A UTC hour is the floor of the time, also before 1970 (a negative count,
// a wall clock set back that far): truncation towards zero put the last
// pre-epoch half hour into 1970's first hour and dropped its own.
TEST(HourFloor, FloorsBeforeTheEpochToo) {
    using Clock = std::chrono::system_clock;
    EXPECT_EQ(hour_floor(Clock::time_point(-500ms)), UtcTime(-1h));
    EXPECT_EQ(hour_floor(Clock::time_point(-1h)), UtcTime(-1h));
    EXPECT_EQ(hour_floor(Clock::time_point(-1h - 1ns)), UtcTime(-2h));
    EXPECT_EQ(hour_floor(Clock::time_point(1h - 1ns)), UtcTime(0h));
}

// The charger reads its clock beside the monitor's edges, not at them (here
// 7 ms later at every read): the hours' seconds still add up to the window's time.
TEST_F(CarbonMonitor, TheHoursSecondsAddUpToTheWindowsTime) {
    HourlyMonitorOptions o = options();
    auto reads = std::make_shared<int>(0);
    o.clock = [this, reads] { return energy_.now() + ++*reads * 7ms; };
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), o);
    energy_.set_gpu_power(0, 300);
    ASSERT_TRUE(monitor.begin_window("train").ok());
    energy_.run_for(20min);  // to 11:00
    monitor.poll();
    energy_.run_for(20min);
    const auto m = monitor.end_window("train").value();
    ASSERT_EQ(m.provenance.hours.size(), 2U);
    double seconds = 0;
    for (const auto& hour : m.provenance.hours) seconds += hour.time.count();
    EXPECT_NEAR(seconds, m.energy.time.count(), 1e-9);
}

TEST_F(CarbonMonitor, WindowAcrossAnHourIsChargedPerHourAtTheRecordedIntensities) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
    energy_.set_gpu_power(0, 300);
    energy_.set_gpu_power(1, 50);
    energy_.set_cpu_power(0, 20);
    ASSERT_TRUE(monitor.begin_window("train").ok());
    energy_.run_for(20min);  // to 11:00 exactly
    monitor.poll();          // what the thread does at the boundary
    energy_.set_gpu_power(0, 100);
    energy_.run_for(20min);
    const auto m = monitor.end_window("train").value();

    const double i10 = intensity(kDay + 10h);
    const double i11 = intensity(kDay + 11h);
    ASSERT_TRUE(m.gpu_carbon_emission.has_value());
    EXPECT_NEAR(m.gpu_carbon_emission->at(0), (300 * 1200 * i10 + 100 * 1200 * i11) / kJoulesPerKwh, 1e-9);
    EXPECT_NEAR(m.gpu_carbon_emission->at(1), (50 * 1200 * i10 + 50 * 1200 * i11) / kJoulesPerKwh, 1e-9);
    EXPECT_NEAR(m.cpu_carbon_emission->at(0), 20 * 2400 * (i10 + i11) / 2 / kJoulesPerKwh, 1e-9);
    EXPECT_NEAR(*m.total_carbon_emission,
                m.gpu_carbon_emission->at(0) + m.gpu_carbon_emission->at(1) + m.cpu_carbon_emission->at(0), 1e-9);
    // The energy is EnergyMonitor's, untouched.
    EXPECT_DOUBLE_EQ(m.energy.gpu_energy.at(0).energy.count(), 300 * 1200 + 100 * 1200);
    EXPECT_DOUBLE_EQ(m.energy.time.count(), 2400);

    const auto& p = m.provenance;
    EXPECT_EQ(p.provider, "ElectricityMaps");
    EXPECT_EQ(p.zone, "US-MIDW-MISO");
    EXPECT_EQ(p.unit, "gCO2eq");
    EXPECT_TRUE(p.available());
    EXPECT_FALSE(p.fallback_used);
    EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
    ASSERT_EQ(p.hours.size(), 2U);
    for (const auto& h : p.hours) {
        ASSERT_TRUE(h.rate.has_value());
        EXPECT_DOUBLE_EQ(h.rate->per_kwh, intensity(h.hour));
        EXPECT_EQ(h.rate->estimated, entry(h.hour)["isEstimated"].get<bool>());
        EXPECT_EQ(h.rate->data_time, testing::parse_recorded_time(entry(h.hour)["datetime"]));
        EXPECT_DOUBLE_EQ(h.time.count(), 1200);
        EXPECT_FALSE(h.fallback);
    }
    EXPECT_NEAR(p.hours[0].energy.count(), (300 + 50 + 20) * 1200.0, 1e-6);
    EXPECT_NEAR(p.hours[1].energy.count(), (100 + 50 + 20) * 1200.0, 1e-6);
    EXPECT_NEAR(p.hours[0].amount + p.hours[1].amount, *m.total_carbon_emission, 1e-9);
}

TEST_F(CarbonMonitor, TheBackgroundThreadSplitsAtTheBoundaryByItself) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());  // polls every 100 ms
    energy_.set_gpu_power(0, 300);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy_.run_for(20min);  // 11:00 exactly; the clock then stands still
    std::this_thread::sleep_for(2s);  // 20 polls' worth, for a slow machine
    energy_.set_gpu_power(0, 100);
    energy_.run_for(20min);
    const auto m = monitor.end_window("w").value();
    const double expected = (300 * 1200 * intensity(kDay + 10h) + 100 * 1200 * intensity(kDay + 11h)) / kJoulesPerKwh;
    EXPECT_NEAR(m.gpu_carbon_emission->at(0), expected, 1e-9 * expected);
    EXPECT_TRUE(m.provenance.warnings.empty()) << m.provenance.warnings.front();
}

TEST_F(CarbonMonitor, AJumpOverBoundariesIsSplitByTimeWithAWarning) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
    energy_.set_gpu_power(0, 200);
    ASSERT_TRUE(monitor.begin_window("long").ok());
    energy_.run_for(110min);  // 10:40 to 12:30, no reading at 11:00 or 12:00
    const auto m = monitor.end_window("long").value();
    const double expected =
        200 * (1200 * intensity(kDay + 10h) + 3600 * intensity(kDay + 11h) + 1800 * intensity(kDay + 12h)) /
        kJoulesPerKwh;
    EXPECT_NEAR(m.gpu_carbon_emission->at(0), expected, 1e-9 * expected);
    ASSERT_EQ(m.provenance.hours.size(), 3U);
    ASSERT_FALSE(m.provenance.warnings.empty());
    EXPECT_NE(m.provenance.warnings.front().find("in proportion to time"), std::string::npos);
}

TEST_F(CarbonMonitor, UnreachableProviderLeavesEnergyAndMarksEmissionUnavailable) {
    const std::string url = ReplayServer::dead_url();
    auto provider = electricity_maps(url);
    CarbonEmissionMonitor monitor(energy_, provider, options());
    energy_.set_gpu_power(0, 250);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy_.run_for(10min);
    const auto m = monitor.end_window("w").value();
    EXPECT_DOUBLE_EQ(m.energy.gpu_energy.at(0).energy.count(), 250 * 600);
    EXPECT_FALSE(m.gpu_carbon_emission.has_value());
    EXPECT_FALSE(m.total_carbon_emission.has_value());
    EXPECT_FALSE(m.provenance.available());
    EXPECT_NE(m.provenance.unavailable_reason.find(url), std::string::npos) << m.provenance.unavailable_reason;
    ASSERT_EQ(m.provenance.hours.size(), 1U);
    EXPECT_FALSE(m.provenance.hours[0].rate.has_value());
    EXPECT_FALSE(m.provenance.warnings.empty());
}

TEST_F(CarbonMonitor, ConfiguredFallbackIsUsedAndFlaggedWhenTheProviderIsDown) {
    auto provider = electricity_maps(ReplayServer::dead_url());
    auto o = options();
    o.fallback_per_kwh = 400;
    CarbonEmissionMonitor monitor(energy_, provider, o);
    energy_.set_gpu_power(0, 250);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy_.run_for(10min);
    const auto m = monitor.end_window("w").value();
    ASSERT_TRUE(m.total_carbon_emission.has_value());
    EXPECT_NEAR(*m.total_carbon_emission, 250 * 600 * 400 / kJoulesPerKwh, 1e-9);
    EXPECT_TRUE(m.provenance.fallback_used);
    EXPECT_TRUE(m.provenance.hours[0].fallback);
    ASSERT_FALSE(m.provenance.warnings.empty());
    EXPECT_NE(m.provenance.warnings.front().find("fallback 400"), std::string::npos) << m.provenance.warnings.front();
}

TEST_F(CarbonMonitor, IntensityPolledWhileReachableSurvivesALaterOutage) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
    energy_.set_gpu_power(0, 100);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    monitor.poll();  // fetches the current hour's intensity
    server_.stop();
    energy_.run_for(5min);
    const auto m = monitor.end_window("w").value();
    ASSERT_TRUE(m.total_carbon_emission.has_value());
    EXPECT_NEAR(*m.total_carbon_emission, 100 * 300 * intensity(kDay + 10h) / kJoulesPerKwh, 1e-9);
    EXPECT_FALSE(m.provenance.fallback_used);
}

TEST_F(CarbonMonitor, HistoryGapsTakeTheNearestHourFlaggedOrAreUnavailable) {
    for (auto& e : recorded_["history"]) {
        const UtcTime hour = testing::parse_recorded_time(e["datetime"]);
        if (hour == kDay + 10h) e["carbonIntensity"] = nullptr;                           // a one-hour gap
        if (hour >= kDay + 3h && hour <= kDay + 8h) e["carbonIntensity"] = nullptr;      // a long one
    }
    {
        CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
        energy_.set_gpu_power(0, 100);
        ASSERT_TRUE(monitor.begin_window("w").ok());
        energy_.run_for(10min);
        const auto m = monitor.end_window("w").value();
        ASSERT_TRUE(m.total_carbon_emission.has_value());
        // 09:00 and 11:00 are both one hour away; the earlier one is used.
        EXPECT_NEAR(*m.total_carbon_emission, 100 * 600 * intensity(kDay + 9h) / kJoulesPerKwh, 1e-9);
        EXPECT_TRUE(m.provenance.fallback_used);
        EXPECT_NE(m.provenance.hours[0].fallback_reason.find(format_utc(kDay + 9h)), std::string::npos)
            << m.provenance.hours[0].fallback_reason;
    }
    ScriptedEnergy early(kDay + 5h + 10min);
    auto o = options();
    o.clock = [&early] { return early.now(); };
    CarbonEmissionMonitor monitor(early, electricity_maps(), o);
    early.set_gpu_power(0, 100);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    early.run_for(10min);
    const auto m = monitor.end_window("w").value();
    EXPECT_FALSE(m.total_carbon_emission.has_value());
    EXPECT_NE(m.provenance.unavailable_reason.find(format_utc(kDay + 5h)), std::string::npos)
        << m.provenance.unavailable_reason;
}

TEST_F(CarbonMonitor, WindowNamesAreCheckedAsTheOriginalDoes) {
    CarbonEmissionMonitor monitor(energy_, constant_intensity(300, "DE").value(), options());
    ASSERT_TRUE(monitor.begin_window("a").ok());
    const auto again = monitor.begin_window("a");
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::InvalidState);
    const auto missing = monitor.end_window("b");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_TRUE(monitor.end_window("a").ok());
}

TEST_F(CarbonMonitor, ConstantIntensityCarriesTheZoneTheUserGave) {
    CarbonEmissionMonitor monitor(energy_, constant_intensity(350, "FR").value(), options());
    energy_.set_gpu_power(0, 400);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy_.run_for(30min);
    const auto m = monitor.end_window("w").value();
    EXPECT_NEAR(*m.total_carbon_emission, 400 * 1800 * 350 / kJoulesPerKwh, 1e-9);
    EXPECT_EQ(m.provenance.provider, "constant");
    EXPECT_EQ(m.provenance.zone, "FR");
    EXPECT_FALSE(constant_intensity(-1).ok());
    EXPECT_FALSE(constant_intensity(std::nan("")).ok());
}

TEST_F(CarbonMonitor, OverlappingWindowsAreEachSplit) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
    energy_.set_gpu_power(0, 100);
    ASSERT_TRUE(monitor.begin_window("outer").ok());
    energy_.run_for(10min);
    ASSERT_TRUE(monitor.begin_window("inner").ok());
    energy_.run_for(10min);
    monitor.poll();
    energy_.run_for(10min);
    const auto inner = monitor.end_window("inner").value();
    const auto outer = monitor.end_window("outer").value();
    const double i10 = intensity(kDay + 10h);
    const double i11 = intensity(kDay + 11h);
    EXPECT_NEAR(*inner.total_carbon_emission, 100 * 600 * (i10 + i11) / kJoulesPerKwh, 1e-9);
    EXPECT_NEAR(*outer.total_carbon_emission, 100 * 600 * (2 * i10 + i11) / kJoulesPerKwh, 1e-9);
}

TEST_F(CarbonMonitor, ReportsCarryTheProvenanceAndNeverPrintZeroForUnavailable) {
    CarbonEmissionMonitor monitor(energy_, electricity_maps(), options());
    energy_.set_gpu_power(0, 300);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy_.run_for(30min);
    const auto m = monitor.end_window("w").value();
    const ChargeLine line{"carbon", m.total_carbon_emission, m.provenance, {}};
    const auto json = nlohmann::json::parse(charge_json(line));
    EXPECT_DOUBLE_EQ(json["total"].get<double>(), *m.total_carbon_emission);
    EXPECT_EQ(json["zone"], "US-MIDW-MISO");
    EXPECT_EQ(json["hours"].size(), 2U);
    EXPECT_EQ(json["hours"][1]["hour"], format_utc(kDay + 11h));
    EXPECT_DOUBLE_EQ(json["hours"][1]["per_kwh"].get<double>(), intensity(kDay + 11h));
    EXPECT_NE(charge_human(line).find("zone US-MIDW-MISO"), std::string::npos) << charge_human(line);
    EXPECT_FALSE(charge_csv_cell(line).empty());

    CarbonEmissionMonitor down(energy_, electricity_maps(ReplayServer::dead_url()), options());
    ASSERT_TRUE(down.begin_window("w").ok());
    energy_.run_for(1min);
    const auto u = down.end_window("w").value();
    const ChargeLine none{"carbon", u.total_carbon_emission, u.provenance, {}};
    const auto j = nlohmann::json::parse(charge_json(none));
    EXPECT_TRUE(j["total"].is_null());
    EXPECT_FALSE(j["available"].get<bool>());
    EXPECT_TRUE(charge_csv_cell(none).empty());
    EXPECT_NE(charge_human(none).find("unavailable"), std::string::npos);
}

// A price given without --currency: the amount has no unit word and no
// double space, the rate reads "per kWh", never a bare "/kWh".
TEST(ChargeReport, ACostWithoutACurrencySaysPerKwh) {
    ChargeLine line{"cost", 0.25, {}, {}};
    line.provenance.provider = "constant";
    line.provenance.zone = "here";
    HourCharge hour;
    hour.hour = UtcTime{} + std::chrono::hours(10);
    hour.rate = HourlyRate{hour.hour, 0.12, hour.hour, false};
    line.provenance.hours.push_back(hour);
    const std::string text = charge_human(line);
    EXPECT_EQ(text, "cost: 0.250 (constant, zone here; 10:00Z 0.12 per kWh)") << text;
    line.provenance.unit = "USD";
    EXPECT_EQ(charge_human(line), "cost: 0.250 USD (constant, zone here; 10:00Z 0.12 USD/kWh)") << charge_human(line);
}

TEST(ChargeReport, AmountsPrintInFixedNotation) {
    // A short window's cost is millionths of a dollar: "2.00777e-06 USD" before.
    EXPECT_EQ(fixed_amount(2.00777e-06, 3), "0.00000201");
    EXPECT_EQ(fixed_amount(0.0123456, 4), "0.01235");
    EXPECT_EQ(fixed_amount(1234.5, 3), "1234.50");
    EXPECT_EQ(fixed_amount(12.3456, 4), "12.35");
    EXPECT_EQ(fixed_amount(0.0, 3), "0.00");
    EXPECT_EQ(fixed_amount(1e-20, 3), "0.000000000000");  // at most 12 decimals
}

TEST(CostMonitor, TimeOfUseWindowAcrossAPriceChange) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-cost-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = (dir / "tou.csv").string();
    std::ofstream(path) << "days,start_hour,end_hour,price_per_kwh\nweekday,7,19,0.21\nall,19,24,0.12\n";
    ScriptedEnergy energy(kDay + 18h + 40min);
    HourlyMonitorOptions o;
    o.clock = [&energy] { return energy.now(); };
    EnergyCostMonitor monitor(energy, prices_from_file(path, "EUR").value(), o);
    energy.set_gpu_power(0, 500);
    ASSERT_TRUE(monitor.begin_window("w").ok());
    energy.run_for(20min);
    monitor.poll();
    energy.set_gpu_power(0, 250);
    energy.run_for(40min);
    const auto m = monitor.end_window("w").value();
    ASSERT_TRUE(m.gpu_energy_cost.has_value());
    EXPECT_NEAR(m.gpu_energy_cost->at(0), (500 * 1200 * 0.21 + 250 * 2400 * 0.12) / kJoulesPerKwh, 1e-12);
    EXPECT_EQ(m.provenance.unit, "EUR");
    EXPECT_EQ(m.provenance.provider, "file " + path);

    // 03:00 on a weekday: no row covers it.
    ScriptedEnergy night(kDay + 3h);
    o.clock = [&night] { return night.now(); };
    EnergyCostMonitor uncovered(night, prices_from_file(path).value(), o);
    night.set_gpu_power(0, 100);
    ASSERT_TRUE(uncovered.begin_window("w").ok());
    night.run_for(1min);
    const auto none = uncovered.end_window("w").value();
    EXPECT_FALSE(none.total_energy_cost.has_value());
    EXPECT_NE(none.provenance.unavailable_reason.find(format_utc(kDay + 3h)), std::string::npos);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::carbon
