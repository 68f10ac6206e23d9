// The carbon-intensity and price providers against a local server replaying
// the recorded answers in data/carbon/, and against files; every bad input
// must come back as an error that names it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "replay_server.hpp"
#include "zeus/carbon/electricity_maps.hpp"
#include "zeus/carbon/intensity_file.hpp"
#include "zeus/carbon/openei.hpp"
#include "zeus/carbon/price_file.hpp"

namespace zeus::carbon {
namespace {

using namespace std::chrono_literals;
using testing::Query;
using testing::ReplayServer;
namespace http = http_server::http;

constexpr const char* kToken = "recorded-token";
constexpr const char* kZone = "US-MIDW-MISO";

UtcTime at(int y, unsigned m, unsigned d, int h) {
    return std::chrono::sys_days(std::chrono::year(y) / m / d) + std::chrono::hours(h);
}

// ElectricityMaps as the recording saw it: history for the recorded zone
// (the 24 hours before `now_hour`), latest = `now_hour`, errors in the
// API's {"error": ...} shape, and the token checked.
class ElectricityMapsReplay : public ::testing::Test {
  protected:
    void SetUp() override {
        // file2's last entry is the current hour; the history ends the hour before.
        recorded_ = testing::shifted_history("carbon_history_file2.json", now_hour_);
        history_ = recorded_;
        history_["history"].erase(history_["history"].size() - 1);
        server_.on("/v3/carbon-intensity/history", [this](const Query& q, const http_server::Request& r) {
            return answer(q, r, history_);
        });
        server_.on("/v3/carbon-intensity/latest", [this](const Query& q, const http_server::Request& r) {
            return answer(q, r, recorded_["history"].back());
        });
    }
    http_server::Response answer(const Query& q, const http_server::Request& r, const nlohmann::json& body) {
        last_query_ = q;
        if (r["auth-token"] != kToken) {
            return http_server::Response::json(R"({"error":"Invalid auth-token"})", http::status::unauthorized);
        }
        if (q.count("zone") == 1 && q.at("zone") != kZone) {
            return http_server::Response::json(
                nlohmann::json{{"error", "Zone '" + q.at("zone") + "' does not exist."}}.dump(),
                http::status::not_found);
        }
        return http_server::Response::json(body.dump());
    }
    ElectricityMapsOptions options(std::string zone = kZone) const {
        ElectricityMapsOptions o;
        o.zone = std::move(zone);
        o.base_url = server_.url();
        o.token = kToken;
        return o;
    }
    // The recorded value for hour `h` (shifted), as the test reads the file itself.
    double recorded(UtcTime hour) const {
        for (const auto& entry : recorded_["history"]) {
            if (testing::parse_recorded_time(entry["datetime"]) == hour) return entry["carbonIntensity"].get<double>();
        }
        ADD_FAILURE() << "no recorded value for " << format_utc(hour);
        return -1;
    }

    UtcTime now_hour_ = at(2026, 11, 25, 4);
    nlohmann::json recorded_;
    nlohmann::json history_;
    Query last_query_;
    ReplayServer server_;
};

TEST_F(ElectricityMapsReplay, HistoryAndLatestAreTheRecordedValuesWithTheirFlags) {
    auto provider = ElectricityMaps::open(options()).value();
    EXPECT_EQ(provider->provider(), "ElectricityMaps");
    EXPECT_EQ(provider->zone(), kZone);
    const auto history = provider->history().value();
    ASSERT_EQ(history.size(), 23U);
    for (std::size_t i = 0; i < history.size(); ++i) {
        const auto& entry = recorded_["history"][i];
        EXPECT_EQ(history[i].hour, testing::parse_recorded_time(entry["datetime"]));
        EXPECT_DOUBLE_EQ(history[i].per_kwh, entry["carbonIntensity"].get<double>());
        EXPECT_EQ(history[i].estimated, entry["isEstimated"].get<bool>());
    }
    const auto latest = provider->latest().value();
    EXPECT_EQ(latest.hour, now_hour_);
    EXPECT_DOUBLE_EQ(latest.per_kwh, recorded(now_hour_));
    // The original's options, as query parameters.
    EXPECT_EQ(last_query_.at("zone"), kZone);
    EXPECT_EQ(last_query_.at("disableEstimations"), "true");
    EXPECT_EQ(last_query_.at("emissionFactorType"), "direct");
}

TEST_F(ElectricityMapsReplay, IntensitiesFetchHistoryThenLatestForTheCurrentHourAndCache) {
    auto o = options();
    o.estimate = true;
    o.emission_factor_type = "lifecycle";
    auto provider = ElectricityMaps::open(o).value();
    const std::vector<UtcTime> hours{now_hour_ - 2h, now_hour_ - 1h, now_hour_};
    auto rates = provider->intensities(hours).value();
    EXPECT_EQ(last_query_.at("disableEstimations"), "false");
    EXPECT_EQ(last_query_.at("emissionFactorType"), "lifecycle");
    std::map<UtcTime, double> by_hour;
    for (const auto& r : rates) by_hour[r.hour] = r.per_kwh;
    for (const UtcTime h : hours) EXPECT_DOUBLE_EQ(by_hour.at(h), recorded(h)) << format_utc(h);
    EXPECT_EQ(server_.requests("/v3/carbon-intensity/history"), 1);
    EXPECT_EQ(server_.requests("/v3/carbon-intensity/latest"), 1);
    (void)provider->intensities(hours).value();  // all cached: no new request
    EXPECT_EQ(server_.requests("/v3/carbon-intensity/history"), 1);
    EXPECT_EQ(server_.requests("/v3/carbon-intensity/latest"), 1);
}

TEST_F(ElectricityMapsReplay, LocationIsSentAsLatLon) {
    auto o = options();
    o.zone.reset();
    o.location = GeoLocation{42.28, -83.74, "given"};
    auto provider = ElectricityMaps::open(o).value();
    EXPECT_NE(provider->zone().find("lat 42.28, lon -83.74"), std::string::npos);
    ASSERT_TRUE(provider->latest().ok());
    EXPECT_EQ(last_query_.at("lat"), "42.28");
    EXPECT_EQ(last_query_.at("lon"), "-83.74");
}

TEST_F(ElectricityMapsReplay, UnknownZoneShowsTheProvidersError) {
    auto provider = ElectricityMaps::open(options("XX-NOWHERE")).value();
    const auto result = provider->history();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("Zone 'XX-NOWHERE' does not exist."), std::string::npos)
        << result.error().message;
    EXPECT_NE(result.error().message.find("HTTP 404"), std::string::npos);
    EXPECT_NE(result.error().hint.find("zone"), std::string::npos);
}

TEST_F(ElectricityMapsReplay, WrongTokenShowsTheProvidersErrorAndNamesTheVariable) {
    auto o = options();
    o.token = "not-the-token";
    const auto result = ElectricityMaps::open(o).value()->latest();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("Invalid auth-token"), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().hint.find(kElectricityMapsTokenVariable), std::string::npos);
}

TEST_F(ElectricityMapsReplay, MissingTokenIsAnErrorNamingTheVariableAndTheOfflineModes) {
    auto o = options();
    o.token.reset();
    ::unsetenv(kElectricityMapsTokenVariable);
    const auto result = ElectricityMaps::open(o);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::InvalidConfig);
    EXPECT_NE(result.error().message.find(kElectricityMapsTokenVariable), std::string::npos);
    EXPECT_NE(result.error().hint.find("--carbon-intensity"), std::string::npos);
    ::setenv(kElectricityMapsTokenVariable, kToken, 1);  // and from the environment it works
    EXPECT_TRUE(ElectricityMaps::open(o).value()->latest().ok());
    ::unsetenv(kElectricityMapsTokenVariable);
}

TEST_F(ElectricityMapsReplay, BadOptionsAreRefusedBeforeAnyRequest) {
    auto both = options();
    both.location = GeoLocation{1, 2, "given"};
    EXPECT_FALSE(ElectricityMaps::open(both).ok());
    auto neither = options();
    neither.zone.reset();
    EXPECT_FALSE(ElectricityMaps::open(neither).ok());
    auto factor = options();
    factor.emission_factor_type = "indirect";
    const auto bad = ElectricityMaps::open(factor);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().hint.find("direct or lifecycle"), std::string::npos);
    auto ocean = options();
    ocean.zone.reset();
    ocean.location = GeoLocation{95, 0, "given"};
    EXPECT_FALSE(ElectricityMaps::open(ocean).ok());
    EXPECT_EQ(server_.requests("/v3/carbon-intensity/history") + server_.requests("/v3/carbon-intensity/latest"), 0);
}

TEST_F(ElectricityMapsReplay, MalformedAnswersAreErrorsQuotingWhatCame) {
    auto provider = ElectricityMaps::open(options()).value();
    history_ = nlohmann::json{{"zone", kZone}, {"history", "not a list"}};
    auto result = provider->history();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("\"history\" is not a list"), std::string::npos) << result.error().message;

    history_ = recorded_;
    history_["history"][3].erase("datetime");
    result = provider->history();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("history entry 4"), std::string::npos) << result.error().message;

    history_ = recorded_;
    history_["history"][0]["carbonIntensity"] = "lots";
    result = provider->history();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("carbonIntensity"), std::string::npos);

    server_.on("/v3/carbon-intensity/latest", [](const Query&, const http_server::Request&) {
        return http_server::Response::text(http::status::ok, "<html>login</html>");
    });
    const auto latest = provider->latest();
    ASSERT_FALSE(latest.ok());
    EXPECT_NE(latest.error().message.find("not JSON"), std::string::npos);
    EXPECT_NE(latest.error().message.find("<html>login</html>"), std::string::npos);
}

TEST_F(ElectricityMapsReplay, NullIntensitiesAreGapsNotZeros) {
    history_["history"][20]["carbonIntensity"] = nullptr;
    auto provider = ElectricityMaps::open(options()).value();
    const auto history = provider->history().value();
    ASSERT_EQ(history.size(), 22U);
    const UtcTime gap = testing::parse_recorded_time(recorded_["history"][20]["datetime"]);
    for (const auto& r : history) EXPECT_NE(r.hour, gap);
}

TEST_F(ElectricityMapsReplay, UnreachableServerIsAnErrorNamingIt) {
    auto o = options();
    o.base_url = ReplayServer::dead_url();
    auto provider = ElectricityMaps::open(o).value();
    const auto result = provider->latest();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find(o.base_url), std::string::npos) << result.error().message;
}

TEST(IpGeolocation, IsReportedAsSuch) {
    ReplayServer server;
    server.on("/json", [](const Query&, const http_server::Request&) {
        return http_server::Response::json(R"({"city":"Ann Arbor","country":"US","loc":"42.2776,-83.7409"})");
    });
    const auto where = locate_by_ip(server.url()).value();
    EXPECT_DOUBLE_EQ(where.latitude, 42.2776);
    EXPECT_DOUBLE_EQ(where.longitude, -83.7409);
    EXPECT_NE(where.source.find("IP geolocation"), std::string::npos);
    EXPECT_NE(where.source.find("Ann Arbor"), std::string::npos);
    server.on("/json", [](const Query&, const http_server::Request&) { return http_server::Response::json("{}"); });
    EXPECT_FALSE(locate_by_ip(server.url()).ok());
}

// Files, for offline use.
class CarbonFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("zeus-carbon-files-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text) {
        const auto path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }
    std::filesystem::path dir_;
};

TEST_F(CarbonFiles, RecordedElectricityMapsJsonIsATimeSeries) {
    const std::string path = testing::data_file("carbon_history_file1.json");
    auto provider = intensity_from_file(path).value();
    EXPECT_EQ(provider->zone(), kZone);
    EXPECT_EQ(provider->provider(), "file " + path);
    const auto rates = provider->intensities({}).value();
    const auto recorded = testing::read_json(path)["history"];
    ASSERT_EQ(rates.size(), recorded.size());
    for (std::size_t i = 0; i < rates.size(); ++i) {
        EXPECT_EQ(rates[i].hour, testing::parse_recorded_time(recorded[i]["datetime"]));
        EXPECT_DOUBLE_EQ(rates[i].per_kwh, recorded[i]["carbonIntensity"].get<double>());
        EXPECT_EQ(rates[i].estimated, recorded[i]["isEstimated"].get<bool>());
    }
}

TEST_F(CarbonFiles, CsvTimeSeries) {
    auto provider = intensity_from_file(write("ok.csv",
                                              "# a comment\n"
                                              "datetime,carbon_intensity,is_estimated,zone\n"
                                              "2026-11-25T03:00:00Z,410,false,DE\n"
                                              "2026-11-25 04:30,380.5,true,DE\n"))
                        .value();
    EXPECT_EQ(provider->zone(), "DE");
    const auto rates = provider->intensities({}).value();
    ASSERT_EQ(rates.size(), 2U);
    EXPECT_EQ(rates[1].hour, at(2026, 11, 25, 4));
    EXPECT_DOUBLE_EQ(rates[1].per_kwh, 380.5);
    EXPECT_TRUE(rates[1].estimated);
}

// Excel and Windows editors save with a UTF-8 byte-order mark and CRLF line ends.
TEST_F(CarbonFiles, FilesSavedOnWindowsReadAsTheOriginals) {
    const std::string csv = "datetime,carbon_intensity\n2026-11-25T03:00:00Z,410\n2026-11-25T04:00:00Z,380.5\n";
    std::string windows = "\xEF\xBB\xBF";
    for (char c : csv) windows += c == '\n' ? std::string("\r\n") : std::string(1, c);
    const auto plain = intensity_from_file(write("plain.csv", csv)).value()->intensities({}).value();
    auto from_windows = intensity_from_file(write("windows.csv", windows));
    ASSERT_TRUE(from_windows.ok()) << from_windows.error().message;
    const auto rates = from_windows.value()->intensities({}).value();
    ASSERT_EQ(rates.size(), plain.size());
    for (std::size_t i = 0; i < rates.size(); ++i) {
        EXPECT_EQ(rates[i].hour, plain[i].hour);
        EXPECT_EQ(rates[i].per_kwh, plain[i].per_kwh);
    }
    const std::string recorded_path = testing::data_file("carbon_history_file1.json");
    std::ifstream recorded(recorded_path);
    const std::string json((std::istreambuf_iterator<char>(recorded)), std::istreambuf_iterator<char>());
    auto json_from_windows = intensity_from_file(write("windows.json", "\xEF\xBB\xBF" + json));
    ASSERT_TRUE(json_from_windows.ok()) << json_from_windows.error().message;
    EXPECT_EQ(json_from_windows.value()->intensities({}).value().size(),
              testing::read_json(recorded_path)["history"].size());
}

TEST_F(CarbonFiles, BadRowsAreErrorsNamingFileAndLine) {
    const struct {
        const char* text;
        const char* says;
    } cases[] = {
        {"datetime,carbon_intensity\n2026-11-25T03:00:00Z,410\n2026-11-25T04:00:00Z,-3\n", "line 3"},
        {"datetime,carbon_intensity\n2026-11-25T03:00:00Z,410\nyesterday,400\n", "line 3: datetime 'yesterday'"},
        {"datetime,carbon_intensity\n2026-11-25T03:00:00Z\n", "line 2: 1 values where the header has 2"},
        {"datetime,carbon_intensity\n2026-11-25T03:00:00Z,1\n2026-11-25T03:30:00Z,2\n", "a second value"},
        {"time,value\n2026-11-25T03:00:00Z,1\n", "no datetime column"},
        {"datetime,carbon_intensity\n", "no rows"},
        {"{\"history\": [", "not valid JSON"},
    };
    for (const auto& c : cases) {
        const std::string path = write("bad.csv", c.text);
        const auto result = intensity_from_file(path);
        ASSERT_FALSE(result.ok()) << c.text;
        EXPECT_NE(result.error().message.find(path), std::string::npos) << result.error().message;
        EXPECT_NE(result.error().message.find(c.says), std::string::npos) << result.error().message;
        EXPECT_FALSE(result.error().hint.empty());
    }
    EXPECT_FALSE(intensity_from_file((dir_ / "missing.csv").string()).ok());
}

TEST_F(CarbonFiles, TimeOfUseTable) {
    auto provider = prices_from_file(write("tou.csv",
                                           "days,start_hour,end_hour,price_per_kwh,months\n"
                                           "weekday,7,19,0.30,6-9\n"
                                           "weekday,7,19,0.21,\n"
                                           "all,0,7,0.08,\n"
                                           "all,19,24,0.12,\n"
                                           "sat,7,19,0.10,\n"),
                                     "EUR")
                        .value();
    EXPECT_EQ(provider->currency(), "EUR");
    // 2026-11-25 is a Wednesday, 2026-07-01 a Wednesday, 2026-11-28 a Saturday, 2026-11-29 a Sunday.
    const std::vector<UtcTime> hours{at(2026, 11, 25, 3), at(2026, 11, 25, 12), at(2026, 7, 1, 12),
                                     at(2026, 11, 25, 20), at(2026, 11, 28, 12), at(2026, 11, 29, 12)};
    const auto rates = provider->prices(hours).value();
    ASSERT_EQ(rates.size(), 5U);  // Sunday noon: no row covers it
    EXPECT_DOUBLE_EQ(rates[0].per_kwh, 0.08);
    EXPECT_DOUBLE_EQ(rates[1].per_kwh, 0.21);
    EXPECT_DOUBLE_EQ(rates[2].per_kwh, 0.30);
    EXPECT_DOUBLE_EQ(rates[3].per_kwh, 0.12);
    EXPECT_DOUBLE_EQ(rates[4].per_kwh, 0.10);

    const auto shifted = prices_from_file(write("tou2.csv", "days,start_hour,end_hour,price_per_kwh\nall,0,7,1\nall,7,24,2\n"),
                                          "", -5)
                             .value();
    // 10:00 UTC is 05:00 at UTC-5.
    EXPECT_DOUBLE_EQ(shifted->prices({at(2026, 11, 25, 10)}).value().at(0).per_kwh, 1.0);
}

TEST_F(CarbonFiles, BadTimeOfUseRowsNameTheLine) {
    const struct {
        const char* text;
        const char* says;
    } cases[] = {
        {"days,start_hour,end_hour,price_per_kwh\nsometimes,0,7,0.1\n", "line 2: days 'sometimes'"},
        {"days,start_hour,end_hour,price_per_kwh\nall,7,7,0.1\n", "line 2: hours 7 to 7"},
        {"days,start_hour,end_hour,price_per_kwh\nall,0,24,cheap\n", "line 2: price 'cheap'"},
        {"days,start_hour,end_hour,price_per_kwh,months\nall,0,24,1,13\n", "months '13'"},
        {"days,start,end,price\nall,0,24,1\n", "no start_hour column"},
    };
    for (const auto& c : cases) {
        const auto result = prices_from_file(write("bad.csv", c.text));
        ASSERT_FALSE(result.ok()) << c.text;
        EXPECT_NE(result.error().message.find(c.says), std::string::npos) << result.error().message;
    }
}

// OpenEI, replaying data/carbon/openei_utility_rates.json.
class OpenEiReplay : public ::testing::Test {
  protected:
    void SetUp() override {
        rates_ = testing::read_json(testing::data_file("openei_utility_rates.json"));
        server_.on("/utility_rates", [this](const Query& q, const http_server::Request&) {
            last_query_ = q;
            if (q.count("api_key") == 0 || q.at("api_key") != "openei-key") {
                return http_server::Response::json(
                    R"({"error":{"code":"API_KEY_INVALID","message":"An invalid api_key was supplied."}})",
                    http::status::forbidden);
            }
            return http_server::Response::json(rates_.dump());
        });
    }
    OpenEiOptions options(std::string label = "000tou00000000000000000b") const {
        OpenEiOptions o;
        o.location = GeoLocation{42.28, -83.74, "given"};
        o.label = std::move(label);
        o.base_url = server_.url();
        o.api_key = "openei-key";
        return o;
    }
    // The recorded answer's rate for a label, period and the test's own schedule lookup.
    double expected(const std::string& label, UtcTime hour) const {
        const double rate = testing::openei_recorded_rate(rates_, label, hour);
        EXPECT_GE(rate, 0) << "no label " << label;
        return rate;
    }
    nlohmann::json rates_;
    Query last_query_;
    ReplayServer server_;
};

TEST_F(OpenEiReplay, PricesFollowTheLabelsScheduleForWeekdaysWeekendsAndMonths) {
    auto provider = openei_prices(options()).value();
    const std::vector<UtcTime> hours{at(2026, 11, 25, 3), at(2026, 11, 25, 12), at(2026, 7, 1, 12),
                                     at(2026, 11, 28, 12)};
    const auto rates = provider->prices(hours).value();
    ASSERT_EQ(rates.size(), hours.size());
    for (std::size_t i = 0; i < hours.size(); ++i) {
        EXPECT_DOUBLE_EQ(rates[i].per_kwh, expected("000tou00000000000000000b", hours[i])) << format_utc(hours[i]);
    }
    EXPECT_EQ(provider->currency(), "USD");
    EXPECT_NE(provider->zone().find("Example Electric Co"), std::string::npos) << provider->zone();
    EXPECT_EQ(last_query_.at("sector"), "Residential");
    EXPECT_EQ(last_query_.at("detail"), "full");
    EXPECT_EQ(last_query_.at("version"), "latest");
    EXPECT_EQ(last_query_.at("lat"), "42.28");
    (void)provider->prices(hours).value();
    EXPECT_EQ(server_.requests("/utility_rates"), 1);  // fetched once
}

TEST_F(OpenEiReplay, UnknownLabelAndBadKeyAreErrors) {
    auto unknown = openei_prices(options("no-such-label")).value()->prices({at(2026, 11, 25, 3)});
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("no-such-label"), std::string::npos);
    auto o = options();
    o.api_key = "wrong";
    auto bad_key = openei_prices(o).value()->prices({at(2026, 11, 25, 3)});
    ASSERT_FALSE(bad_key.ok());
    EXPECT_NE(bad_key.error().message.find("An invalid api_key was supplied."), std::string::npos)
        << bad_key.error().message;
    o.api_key.reset();
    ::unsetenv(kOpenEiKeyVariable);
    const auto no_key = openei_prices(o);
    ASSERT_FALSE(no_key.ok());
    EXPECT_NE(no_key.error().message.find(kOpenEiKeyVariable), std::string::npos);
    auto sector = options();
    sector.sector = "Household";
    EXPECT_FALSE(openei_prices(sector).ok());
}

TEST_F(OpenEiReplay, ARateWithABrokenScheduleIsAnError) {
    rates_["items"][1]["energyweekdayschedule"][2][5] = 7;  // no period 7
    const auto result = openei_prices(options()).value()->prices({at(2026, 11, 25, 3)});
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("month 3 hour 5"), std::string::npos) << result.error().message;
}

}  // namespace
}  // namespace zeus::carbon
