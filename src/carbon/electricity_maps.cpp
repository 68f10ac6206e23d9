#include "zeus/carbon/electricity_maps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "carbon/electricity_maps_json.hpp"
#include "carbon/provider_http.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus::carbon {

struct ElectricityMaps::State {
    ElectricityMapsOptions options;
    std::unique_ptr<HttpClient> client;
    std::mutex mutex;
    std::map<UtcTime, HourlyRate> cache;

    [[nodiscard]] std::string where() const {
        if (options.zone) return fmt::format("zone {}", *options.zone);
        return fmt::format("lat {}, lon {} ({})", options.location->latitude, options.location->longitude,
                           options.location->source);
    }
    [[nodiscard]] std::string query() const {
        std::string q = options.zone ? "zone=" + url_encode(*options.zone)
                                     : fmt::format("lat={}&lon={}", options.location->latitude,
                                                   options.location->longitude);
        return fmt::format("{}&disableEstimations={}&emissionFactorType={}", q, options.estimate ? "false" : "true",
                           options.emission_factor_type);
    }
    Result<ElectricityMapsSeries> fetch(const char* kind) {
        const std::string what = fmt::format("ElectricityMaps {} carbon intensity for {}", kind, where());
        auto json = get_json(*client, fmt::format("/v3/carbon-intensity/{}?{}", kind, query()), what,
                             fmt::format("check the zone or location (zones: GET {}/v3/zones) and the token in {}",
                                         options.base_url, kElectricityMapsTokenVariable));
        if (!json) return json.error();
        return read_electricity_maps(*json, what);
    }
    void remember(const std::vector<HourlyRate>& rates) {
        for (const auto& rate : rates) cache[rate.hour] = rate;
    }
};

Result<std::unique_ptr<ElectricityMaps>> ElectricityMaps::open(ElectricityMapsOptions options) {
    if (options.zone.has_value() == options.location.has_value()) {
        return Error{ErrorCode::InvalidConfig, "ElectricityMaps needs exactly one of a zone and a location",
                     "give a zone (--carbon-zone US-MIDW-MISO) or a latitude,longitude (--carbon-zone 42.28,-83.74)", 0};
    }
    if (options.zone && options.zone->empty()) {
        return Error{ErrorCode::InvalidConfig, "the ElectricityMaps zone is empty",
                     "give a zone such as US-MIDW-MISO or DE", 0};
    }
    if (options.location && (!std::isfinite(options.location->latitude) || std::abs(options.location->latitude) > 90 ||
                             !std::isfinite(options.location->longitude) ||
                             std::abs(options.location->longitude) > 180)) {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("latitude {} / longitude {} is not a place on Earth", options.location->latitude,
                                 options.location->longitude),
                     "latitude in [-90, 90], longitude in [-180, 180]", 0};
    }
    if (options.emission_factor_type != "direct" && options.emission_factor_type != "lifecycle") {
        return Error{ErrorCode::InvalidConfig,
                     fmt::format("emission factor type '{}' is not one ElectricityMaps knows",
                                 options.emission_factor_type),
                     "use direct or lifecycle", 0};
    }
    if (!options.token) options.token = get_env(kElectricityMapsTokenVariable);
    const bool has_token = options.token && !options.token->empty();
    if (!has_token && !options.allow_no_token) {
        return Error{ErrorCode::InvalidConfig, fmt::format("no ElectricityMaps API token: {} is not set",
                                                           kElectricityMapsTokenVariable),
                     fmt::format("set {} to your token (app.electricitymaps.com), or work offline with "
                                 "--carbon-intensity or --carbon-file",
                                 kElectricityMapsTokenVariable),
                     0};
    }
    auto state = std::make_unique<State>();
    std::vector<std::string> headers;
    if (has_token) headers.push_back("auth-token: " + *options.token);
    state->client = api_client(options.base_url, "ElectricityMaps", std::move(headers));
    state->options = std::move(options);
    return std::unique_ptr<ElectricityMaps>(new ElectricityMaps(std::move(state)));
}

ElectricityMaps::ElectricityMaps(std::unique_ptr<State> state) : state_(std::move(state)) {}
ElectricityMaps::~ElectricityMaps() = default;

std::string ElectricityMaps::zone() const {
    return state_->options.zone ? *state_->options.zone : state_->where();
}

Result<HourlyRate> ElectricityMaps::latest() {
    auto series = state_->fetch("latest");
    if (!series) return series.error();
    if (series->rates.empty()) {
        return Error{ErrorCode::NoData,
                     fmt::format("ElectricityMaps has no latest carbon intensity for {}", state_->where()),
                     "try again later, or pass estimate = true (--carbon-estimate) to accept estimated values", 0};
    }
    std::lock_guard lock(state_->mutex);
    state_->remember(series->rates);
    return series->rates.back();
}

Result<std::vector<HourlyRate>> ElectricityMaps::history() {
    auto series = state_->fetch("history");
    if (!series) return series.error();
    std::lock_guard lock(state_->mutex);
    state_->remember(series->rates);
    return series->rates;
}

Result<std::vector<HourlyRate>> ElectricityMaps::intensities(const std::vector<UtcTime>& hours) {
    const auto missing = [&] {
        std::lock_guard lock(state_->mutex);
        return std::any_of(hours.begin(), hours.end(), [&](UtcTime h) { return !state_->cache.contains(h); });
    };
    if (missing()) {
        auto recent = history();
        if (!recent) return recent.error();
    }
    // The history ends an hour or so before now; the current hour comes from /latest.
    const bool newest_missing = [&] {
        std::lock_guard lock(state_->mutex);
        if (hours.empty()) return false;
        const UtcTime newest = *std::max_element(hours.begin(), hours.end());
        return !state_->cache.contains(newest) &&
               (state_->cache.empty() || newest > state_->cache.rbegin()->first);
    }();
    if (newest_missing) {
        auto now = latest();
        if (!now && now.error().code != ErrorCode::NoData) return now.error();
    }
    std::lock_guard lock(state_->mutex);
    std::vector<HourlyRate> known;
    known.reserve(state_->cache.size());
    for (const auto& [hour, rate] : state_->cache) known.push_back(rate);
    return known;
}

Result<GeoLocation> locate_by_ip(const std::string& base_url) {
    auto client = api_client(base_url, "IP geolocation", {});
    auto json = get_json(*client, "/json", "IP geolocation", "give the location yourself (--carbon-zone LAT,LON)");
    if (!json) return json.error();
    const auto loc = json->find("loc");
    double lat = 0;
    double lon = 0;
    if (loc == json->end() || !loc->is_string() ||
        std::sscanf(loc->get<std::string>().c_str(), "%lf,%lf", &lat, &lon) != 2) {
        return Error{ErrorCode::InvalidState,
                     fmt::format("IP geolocation at {}: no \"loc\": \"lat,lon\" in the answer: {}", base_url,
                                 excerpt(json->dump())),
                     "give the location yourself (--carbon-zone LAT,LON)", 0};
    }
    std::string place;
    for (const char* key : {"city", "country"}) {
        if (const auto it = json->find(key); it != json->end() && it->is_string()) {
            place += (place.empty() ? "" : ", ") + it->get<std::string>();
        }
    }
    return GeoLocation{lat, lon, fmt::format("IP geolocation ({}{}{})", base_url, place.empty() ? "" : ": ", place)};
}

}  // namespace zeus::carbon
