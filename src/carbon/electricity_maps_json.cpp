#include "carbon/electricity_maps_json.hpp"

#include <fmt/format.h>

#include "carbon/provider_http.hpp"
#include "carbon/utc_time.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::carbon {

namespace {

Error malformed(const std::string& where, const std::string& problem, const nlohmann::json& value) {
    return Error{ErrorCode::InvalidState,
                 fmt::format("{}: {} (got {})", where, problem, excerpt(json_text(value), 200)),
                 "expected the ElectricityMaps v3 carbon-intensity shape: {\"datetime\": \"2024-12-01T06:00:00.000Z\", "
                 "\"carbonIntensity\": 419, \"isEstimated\": false}",
                 0};
}

}  // namespace

Result<ElectricityMapsSeries> read_electricity_maps_entry(const nlohmann::json& entry, const std::string& where) {
    if (!entry.is_object()) return malformed(where, "not an object", entry);
    ElectricityMapsSeries series;
    if (const auto zone = entry.find("zone"); zone != entry.end() && zone->is_string()) series.zone = *zone;
    const auto datetime = entry.find("datetime");
    if (datetime == entry.end() || !datetime->is_string()) return malformed(where, "no \"datetime\" string", entry);
    const auto when = parse_utc(datetime->get<std::string>());
    if (!when) return malformed(where, "\"datetime\" is not an ISO 8601 UTC time", *datetime);
    const auto intensity = entry.find("carbonIntensity");
    if (intensity == entry.end()) return malformed(where, "no \"carbonIntensity\"", entry);
    if (intensity->is_null()) return series;  // the provider has no value for that hour: a gap
    if (!intensity->is_number() || intensity->get<double>() < 0) {
        return malformed(where, "\"carbonIntensity\" is not a number of at least 0", *intensity);
    }
    bool estimated = false;
    if (const auto flag = entry.find("isEstimated"); flag != entry.end() && !flag->is_null()) {
        if (!flag->is_boolean()) return malformed(where, "\"isEstimated\" is not true or false", *flag);
        estimated = flag->get<bool>();
    }
    series.rates.push_back(HourlyRate{hour_floor(*when), intensity->get<double>(), *when, estimated});
    return series;
}

Result<ElectricityMapsSeries> read_electricity_maps(const nlohmann::json& answer, const std::string& where) {
    if (!answer.is_object()) return malformed(where, "not a JSON object", answer);
    const auto history = answer.find("history");
    if (history == answer.end()) return read_electricity_maps_entry(answer, where);
    if (!history->is_array()) return malformed(where, "\"history\" is not a list", *history);
    ElectricityMapsSeries series;
    if (const auto zone = answer.find("zone"); zone != answer.end() && zone->is_string()) series.zone = *zone;
    for (std::size_t i = 0; i < history->size(); ++i) {
        auto entry = read_electricity_maps_entry((*history)[i], fmt::format("{}, history entry {}", where, i + 1));
        if (!entry) return entry.error();
        if (series.zone.empty()) series.zone = entry->zone;
        series.rates.insert(series.rates.end(), entry->rates.begin(), entry->rates.end());
    }
    return series;
}

}  // namespace zeus::carbon
