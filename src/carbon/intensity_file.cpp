#include "zeus/carbon/intensity_file.hpp"

#include <map>

#include <fmt/format.h>

#include "carbon/csv_rows.hpp"
#include "carbon/electricity_maps_json.hpp"
#include "carbon/utc_time.hpp"

namespace zeus::carbon {

namespace {

constexpr const char* kCsvShape =
    "a CSV with the header datetime,carbon_intensity[,is_estimated][,zone] and rows such as "
    "2024-12-01T06:00:00Z,419,false, or a saved ElectricityMaps answer (JSON)";

class IntensityFile final : public CarbonIntensityProvider {
  public:
    IntensityFile(std::string path, std::string zone, std::vector<HourlyRate> rates)
        : path_(std::move(path)), zone_(std::move(zone)), rates_(std::move(rates)) {}
    [[nodiscard]] std::string provider() const override { return "file " + path_; }
    [[nodiscard]] std::string zone() const override { return zone_.empty() ? "unspecified" : zone_; }
    [[nodiscard]] Result<std::vector<HourlyRate>> intensities(const std::vector<UtcTime>&) override { return rates_; }

  private:
    std::string path_;
    std::string zone_;
    std::vector<HourlyRate> rates_;
};

Error bad_row(const std::string& path, std::size_t line, const std::string& problem) {
    return Error{ErrorCode::InvalidConfig, fmt::format("{} line {}: {}", path, line, problem),
                 fmt::format("fix that line; the file must be {}", kCsvShape), 0};
}

Result<std::unique_ptr<CarbonIntensityProvider>> from_csv(const std::string& path, const std::string& text) {
    auto table = read_csv(path, text);
    if (!table) return table.error();
    for (const char* required : {"datetime", "carbon_intensity"}) {
        if (!table->columns.contains(required) && !(std::string(required) == "carbon_intensity" &&
                                                    table->columns.contains("carbonintensity"))) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{}: the header has no {} column", path, required),
                         fmt::format("the file must be {}", kCsvShape), 0};
        }
    }
    std::string zone;
    std::map<UtcTime, HourlyRate> rates;
    for (const auto& row : table->rows) {
        const std::string when_text = *table->cell(row, {"datetime"});
        const auto when = parse_utc(when_text);
        if (!when) return bad_row(path, row.line, fmt::format("datetime '{}' is not an ISO 8601 UTC time", when_text));
        const std::string value_text = *table->cell(row, {"carbon_intensity", "carbonintensity"});
        const auto value = parse_number(value_text);
        if (!value || *value < 0) {
            return bad_row(path, row.line,
                           fmt::format("carbon intensity '{}' is not a finite number of at least 0 (gCO2eq/kWh)",
                                       value_text));
        }
        bool estimated = false;
        if (const auto flag = table->cell(row, {"is_estimated", "isestimated"}); flag && !flag->empty()) {
            if (*flag == "true" || *flag == "1") {
                estimated = true;
            } else if (*flag != "false" && *flag != "0") {
                return bad_row(path, row.line, fmt::format("is_estimated '{}' is not true or false", *flag));
            }
        }
        if (const auto z = table->cell(row, {"zone"}); z && !z->empty()) {
            if (!zone.empty() && zone != *z) {
                return bad_row(path, row.line,
                               fmt::format("zone '{}' differs from '{}' on an earlier line", *z, zone));
            }
            zone = *z;
        }
        const UtcTime hour = hour_floor(*when);
        if (rates.contains(hour)) {
            return bad_row(path, row.line, fmt::format("a second value for the hour {}", format_utc(hour)));
        }
        rates[hour] = HourlyRate{hour, *value, *when, estimated};
    }
    if (rates.empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("{} has a header but no rows", path),
                     "add one row per hour", 0};
    }
    std::vector<HourlyRate> list;
    for (const auto& [hour, rate] : rates) list.push_back(rate);
    return std::unique_ptr<CarbonIntensityProvider>(std::make_unique<IntensityFile>(path, zone, std::move(list)));
}

}  // namespace

Result<std::unique_ptr<CarbonIntensityProvider>> intensity_from_file(const std::string& path) {
    auto text = read_text_file(path, "carbon-intensity file", "--carbon-file");
    if (!text) return text.error();
    const auto first = text->find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text->at(first) == '{' || text->at(first) == '[')) {
        const auto json = nlohmann::json::parse(*text, nullptr, false);
        if (json.is_discarded()) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{} starts like JSON but is not valid JSON", path),
                         fmt::format("the file must be {}", kCsvShape), 0};
        }
        auto series = read_electricity_maps(json, path);
        if (!series) {
            Error e = series.error();
            e.code = ErrorCode::InvalidConfig;
            return e;
        }
        if (series->rates.empty()) {
            return Error{ErrorCode::InvalidConfig, fmt::format("{} has no carbon intensity values", path),
                         "save an ElectricityMaps /history answer with values in it", 0};
        }
        return std::unique_ptr<CarbonIntensityProvider>(
            std::make_unique<IntensityFile>(path, series->zone, std::move(series->rates)));
    }
    return from_csv(path, *text);
}

}  // namespace zeus::carbon
