// `zeus run` and `zeus energy` with --carbon-* and --price*: the carbon
// emission and cost beside the joules in every format, against a loopback
// server replaying data/carbon/ for ElectricityMaps; bad input exits 2 with
// the problem and the fix; an unreachable provider leaves the joules and
// prints the emission as unavailable, never 0.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "replay_server.hpp"
#include "support/command_output.hpp"
#include "support/build_paths.hpp"

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;
using carbon::testing::Query;
using carbon::testing::ReplayServer;

constexpr double kJoulesPerKwh = 3.6e6;

class CarbonCommands : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("zeus-carbon-cli-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        env_ = "env -u CUDA_VISIBLE_DEVICES -u ZEUS_SIM_CONFIG ZEUS_SIM_STATE=" + (dir_ / "state").string() +
               " ZEUS_POWERCAP_ROOT=" + (dir_ / "none").string() + " ";
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string zeus(const std::string& args) const {
        return env_ + zeus::testing::zeus_cli_path() + std::string(" ") + args;
    }
    std::string write(const std::string& name, const std::string& text) const {
        const auto path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }
    fs::path dir_;
    std::string env_;
};

TEST_F(CarbonCommands, RunPrintsCarbonAndCostBesideTheJoulesInJson) {
    const auto r = testing::capture_separately(
        zeus("run --simulate --carbon-intensity 350 --carbon-zone DE --price 0.2 --currency EUR --format json "
             "--output - -- sleep 0.3"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const double joules = j["total_energy_j"].get<double>();
    ASSERT_GT(joules, 0.0);
    EXPECT_NEAR(j["carbon"]["total"].get<double>(), joules * 350 / kJoulesPerKwh, 1e-6 * joules * 350 / kJoulesPerKwh);
    EXPECT_EQ(j["carbon"]["provider"], "constant");
    EXPECT_EQ(j["carbon"]["zone"], "DE");
    EXPECT_EQ(j["carbon"]["unit"], "gCO2eq");
    EXPECT_NEAR(j["cost"]["total"].get<double>(), joules * 0.2 / kJoulesPerKwh, 1e-6 * joules * 0.2 / kJoulesPerKwh);
    EXPECT_EQ(j["cost"]["unit"], "EUR");
    double device_sum = 0;
    for (const auto& d : j["devices"]) {
        EXPECT_NEAR(d["carbon_gco2eq"].get<double>(), d["energy_j"].get<double>() * 350 / kJoulesPerKwh, 1e-9);
        device_sum += d["carbon_gco2eq"].get<double>();
    }
    EXPECT_NEAR(device_sum, j["carbon"]["total"].get<double>(), 1e-9);
}

// The carbon and cost monitors' own hourly windows are measured, never logged:
// --log-file holds the user's window only.
TEST_F(CarbonCommands, TheLogFileHoldsOnlyTheRunsWindow) {
    const auto log = dir_ / "windows.csv";
    const auto r =
        testing::capture_separately(zeus("energy --simulate --duration 0.3 --carbon-intensity 350 --price 0.2 "
                                         "--currency EUR --log-file " +
                                         log.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(log);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(in, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 2U) << "header and one window expected; the log holds " << rows.size() << " lines";
    EXPECT_EQ(rows[1].find("__"), std::string::npos) << rows[1];
}

TEST_F(CarbonCommands, EnergyChargesEachHourAtTheRecordedElectricityMapsIntensity) {
    // The recording, shifted so its last hour is the current one: whatever
    // hour(s) the window falls in have a recorded value.
    const auto now_hour = std::chrono::floor<std::chrono::hours>(
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()));
    const auto recorded = carbon::testing::shifted_history("carbon_history_file2.json", now_hour + std::chrono::hours(1));
    ReplayServer server;
    server.on("/v3/carbon-intensity/history", [&](const Query& q, const http_server::Request& req) {
        if (req["auth-token"] != "cli-token" || q.at("zone") != "US-MIDW-MISO") {
            return http_server::Response::json(R"({"error":"Zone or token wrong"})", http_server::http::status::not_found);
        }
        return http_server::Response::json(recorded.dump());
    });
    const auto r = testing::capture_separately(
        "ELECTRICITYMAPS_API_TOKEN=cli-token ZEUS_ELECTRICITYMAPS_URL=" + server.url() + " " +
        zeus("energy --simulate --duration 0.5 --carbon-zone US-MIDW-MISO --format json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j["carbon"];
    EXPECT_EQ(c["provider"], "ElectricityMaps");
    EXPECT_EQ(c["zone"], "US-MIDW-MISO");
    ASSERT_TRUE(c["available"].get<bool>()) << c.dump();
    double expected = 0;
    double hour_energy = 0;
    for (const auto& h : c["hours"]) {
        double intensity = -1;
        for (const auto& e : recorded["history"]) {
            if (e["datetime"].get<std::string>().substr(0, 19) == h["hour"].get<std::string>().substr(0, 19)) {
                intensity = e["carbonIntensity"].get<double>();
                EXPECT_EQ(h["estimated"].get<bool>(), e["isEstimated"].get<bool>());
            }
        }
        EXPECT_DOUBLE_EQ(h["per_kwh"].get<double>(), intensity) << h.dump();
        expected += h["energy_j"].get<double>() * intensity / kJoulesPerKwh;
        hour_energy += h["energy_j"].get<double>();
    }
    EXPECT_NEAR(hour_energy, j["total_energy_j"].get<double>(), 1e-6 * hour_energy);
    EXPECT_NEAR(c["total"].get<double>(), expected, 1e-9 * expected);
    EXPECT_FALSE(c["fallback_used"].get<bool>());
}

TEST_F(CarbonCommands, EnergyChargesEachHourAtTheOpenEiRate) {
    const auto rates = carbon::testing::read_json(carbon::testing::data_file("openei_utility_rates.json"));
    const std::string label = "000tou00000000000000000b";
    ReplayServer server;
    server.on("/utility_rates", [&](const Query& q, const http_server::Request&) {
        if (q.count("api_key") == 0 || q.at("api_key") != "cli-key" || q.at("lat") != "42.28") {
            return http_server::Response::json(R"({"error":{"code":"API_KEY_INVALID","message":"bad key"}})",
                                               http_server::http::status::forbidden);
        }
        return http_server::Response::json(rates.dump());
    });
    // The recorded rate of `label` for a UTC hour, by its weekday/weekend schedule and month.
    auto rate_at = [&](const std::string& iso_hour) {
        int y = 0;
        unsigned month = 0, d = 0;
        std::size_t h = 0;
        EXPECT_EQ(std::sscanf(iso_hour.c_str(), "%d-%u-%uT%zu", &y, &month, &d, &h), 4) << iso_hour;
        const std::chrono::sys_days day{std::chrono::year{y} / std::chrono::month{month} / std::chrono::day{d}};
        const double rate = carbon::testing::openei_recorded_rate(rates, label, day + std::chrono::hours(h));
        EXPECT_GE(rate, 0) << "no label " << label;
        return rate;
    };
    const std::string env = "OPENEI_API_KEY=cli-key ZEUS_OPENEI_URL=" + server.url() + " ";
    const auto r = testing::capture_separately(
        env + zeus("energy --simulate --duration 0.5 --price-openei " + label +
                   " --price-location 42.28,-83.74 --format json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j["cost"];
    ASSERT_TRUE(c["available"].get<bool>()) << c.dump();
    EXPECT_EQ(c["unit"], "USD");
    double expected = 0;
    ASSERT_FALSE(c["hours"].empty()) << c.dump();
    for (const auto& h : c["hours"]) {
        const double rate = rate_at(h["hour"].get<std::string>());
        EXPECT_DOUBLE_EQ(h["per_kwh"].get<double>(), rate) << h.dump();
        expected += h["energy_j"].get<double>() * rate / kJoulesPerKwh;
    }
    EXPECT_GT(expected, 0.0);
    EXPECT_NEAR(c["total"].get<double>(), expected, 1e-9 * expected);

    for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
             {"--price-openei " + label, "--price-location LAT,LON"},
             {"--price-openei " + label + " --price-location 42.28,-83.74 --price 0.2",
              "give one of --price and --price-openei"},
             {"--price 0.2 --price-location 42.28,-83.74", "--price-location only says where"},
         }) {
        const auto bad = testing::capture_separately(env + zeus("energy --simulate --duration 0.1 " + args));
        EXPECT_EQ(bad.exit_code, 2) << args << "\n" << bad.err;
        EXPECT_NE(bad.err.find(says), std::string::npos) << args << "\n" << bad.err;
    }
    const auto no_key = testing::capture_separately(
        "env -u OPENEI_API_KEY " + zeus("energy --simulate --duration 0.1 --price-openei " + label +
                                        " --price-location 42.28,-83.74"));
    EXPECT_EQ(no_key.exit_code, 2) << no_key.err;
    EXPECT_NE(no_key.err.find("OPENEI_API_KEY"), std::string::npos) << no_key.err;
}

TEST_F(CarbonCommands, IpGeolocationOnlyWhenAskedAndReportedAsSuch) {
    const auto now_hour = std::chrono::floor<std::chrono::hours>(
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()));
    const auto recorded = carbon::testing::shifted_history("carbon_history_file1.json", now_hour + std::chrono::hours(1));
    ReplayServer server;
    std::string asked_lat;
    server.on("/json", [](const Query&, const http_server::Request&) {
        return http_server::Response::json(R"({"city":"Ann Arbor","country":"US","loc":"42.2776,-83.7409"})");
    });
    server.on("/v3/carbon-intensity/history", [&](const Query& q, const http_server::Request&) {
        asked_lat = q.count("lat") ? q.at("lat") : "";
        return http_server::Response::json(recorded.dump());
    });
    const std::string env = "ELECTRICITYMAPS_API_TOKEN=t ZEUS_ELECTRICITYMAPS_URL=" + server.url() +
                            " ZEUS_IPINFO_URL=" + server.url() + " ";
    const auto r = testing::capture_separately(
        env + zeus("energy --simulate --duration 0.2 --carbon-zone from-ip --format json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("IP geolocation"), std::string::npos) << r.err;
    EXPECT_EQ(asked_lat, "42.2776");
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j["carbon"]["zone"].get<std::string>().find("IP geolocation"), std::string::npos) << j["carbon"];
    // Without from-ip nothing asks where the machine is.
    const int lookups = server.requests("/json");
    (void)testing::capture_separately(env + zeus("energy --simulate --duration 0.2 --carbon-zone 42.28,-83.74"));
    EXPECT_EQ(server.requests("/json"), lookups);
}

TEST_F(CarbonCommands, CsvAndHumanCarryTheAmounts) {
    auto r = testing::capture_separately(zeus("energy --simulate --duration 0.3 --carbon-intensity 500 --format csv"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream csv(r.out);
    std::string header;
    std::getline(csv, header);
    EXPECT_TRUE(header.ends_with(",simulated,carbon_gco2eq")) << header;
    std::string row;
    int rows = 0;
    while (std::getline(csv, row)) {
        std::vector<std::string> cells;
        std::istringstream fields(row);
        for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
        ASSERT_EQ(cells.size(), 11U) << row;  // a value in the last cell, not an empty one
        const double energy = std::stod(cells[5]);
        EXPECT_NEAR(std::stod(cells[10]), energy * 500 / kJoulesPerKwh, 1e-6 * 500 / kJoulesPerKwh + 1e-12) << row;
        ++rows;
    }
    EXPECT_GT(rows, 0);

    r = testing::capture_separately(zeus("energy --simulate --duration 0.3 --price-file " +
                                         write("tou.csv", "days,start_hour,end_hour,price_per_kwh\nall,0,24,0.3\n") +
                                         " --currency USD"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Cost:     "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0.3 USD/kWh"), std::string::npos) << r.out;
}

TEST_F(CarbonCommands, UnreachableProviderKeepsTheJoulesAndSaysUnavailable) {
    const std::string dead = ReplayServer::dead_url();
    const auto r = testing::capture_separately("ELECTRICITYMAPS_API_TOKEN=t ZEUS_ELECTRICITYMAPS_URL=" + dead + " " +
                                               zeus("energy --simulate --duration 0.3 --carbon-zone DE --format json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["total_energy_j"].get<double>(), 0.0);
    EXPECT_TRUE(j["carbon"]["total"].is_null());
    EXPECT_FALSE(j["carbon"]["available"].get<bool>());
    EXPECT_NE(j["carbon"]["unavailable_reason"].get<std::string>().find(dead), std::string::npos);
    for (const auto& d : j["devices"]) EXPECT_TRUE(d["carbon_gco2eq"].is_null());

    const auto human = testing::capture_separately("ELECTRICITYMAPS_API_TOKEN=t ZEUS_ELECTRICITYMAPS_URL=" + dead + " " +
                                                   zeus("energy --simulate --duration 0.3 --carbon-zone DE"));
    EXPECT_NE(human.out.find("Carbon:   unavailable"), std::string::npos) << human.out;
}

TEST_F(CarbonCommands, BadInputExitsTwoNamingTheProblemAndTheFix) {
    const struct {
        std::string args;
        std::string says;
    } cases[] = {
        {"--carbon-zone DE", "ELECTRICITYMAPS_API_TOKEN"},
        {"--carbon-intensity 300 --carbon-file x.csv", "--carbon-intensity and --carbon-file"},
        {"--price 0.1 --price-file x.csv", "--price and --price-file"},
        {"--carbon-file " + write("bad.csv", "datetime,carbon_intensity\n2026-11-25T03:00:00Z,lots\n"), "line 2"},
        {"--carbon-file " + (dir_ / "missing.csv").string(), "missing.csv': it does not exist"},
        {"--price-file " + write("bad-tou.csv", "days,start_hour,end_hour,price_per_kwh\nsometimes,0,24,1\n"),
         "days 'sometimes'"},
        {"--currency EUR", "only qualify"},
        // Non-finite values would print "Cost: nan USD" or a JSON null marked available.
        {"--carbon-file " + write("nan.csv", "datetime,carbon_intensity\n2026-11-25T02:00:00Z,300\n"
                                             "2026-11-25T03:00:00Z,nan\n"),
         "line 3: carbon intensity 'nan' is not a finite number"},
        {"--carbon-file " + write("inf.csv", "datetime,carbon_intensity\n2026-11-25T03:00:00Z,inf\n"),
         "line 2: carbon intensity 'inf' is not a finite number"},
        {"--price-file " + write("nan-tou.csv", "days,start_hour,end_hour,price_per_kwh\nall,0,12,0.1\nall,12,24,NaN\n"),
         "line 3: price 'NaN' is not a finite number"},
        {"--price-file " + write("inf-tou.csv", "days,start_hour,end_hour,price_per_kwh\nall,0,24,infinity\n"),
         "line 2: price 'infinity' is not a finite number"},
    };
    for (const auto& c : cases) {
        const auto r = testing::capture_separately("ELECTRICITYMAPS_API_TOKEN= " +
                                                   zeus("energy --simulate --duration 0.1 " + c.args));
        EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

}  // namespace
}  // namespace zeus::cli
