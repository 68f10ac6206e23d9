// Carbon intensity from the ElectricityMaps API (v3): the latest value and
// the last 24 hours, for a zone or a latitude/longitude. The token comes
// from ELECTRICITYMAPS_API_TOKEN (sent as the `auth-token` header), never
// from the code. The location is always the caller's: IP geolocation only
// through locate_by_ip(), which says so in the zone it reports.
//
//   ElectricityMapsOptions o;
//   o.zone = "US-MIDW-MISO";
//   auto provider = zeus::carbon::ElectricityMaps::open(o).value();
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/carbon/intensity_provider.hpp"

namespace zeus::carbon {

inline constexpr const char* kElectricityMapsTokenVariable = "ELECTRICITYMAPS_API_TOKEN";

struct GeoLocation {
    double latitude = 0;
    double longitude = 0;
    // How it was found, for the report: "given", or "IP geolocation (ipinfo.io: Ann Arbor, US)".
    std::string source = "given";
};

struct ElectricityMapsOptions {
    std::optional<std::string> zone;        // "US-MIDW-MISO"; exactly one of zone and location
    std::optional<GeoLocation> location;
    // The original's options: estimate = false sends disableEstimations=true;
    // emission_factor_type "direct" or "lifecycle".
    bool estimate = false;
    std::string emission_factor_type = "direct";
    // Where the API is; tests point it at a local server.
    std::string base_url = "https://api.electricitymap.org";
    // nullopt: read ELECTRICITYMAPS_API_TOKEN.
    std::optional<std::string> token;
    // Without a token anywhere: true sends the requests without one (the
    // original's Python client does; the API may refuse them, naming the
    // variable then); false refuses at open().
    bool allow_no_token = false;
};

class ElectricityMaps final : public CarbonIntensityProvider {
  public:
    // Errors: no zone/location or both, an emission_factor_type other than
    // direct/lifecycle, no token (InvalidConfig, naming the variable).
    [[nodiscard]] static Result<std::unique_ptr<ElectricityMaps>> open(ElectricityMapsOptions options);
    ~ElectricityMaps() override;

    [[nodiscard]] std::string provider() const override { return "ElectricityMaps"; }
    [[nodiscard]] std::string zone() const override;
    // Fetches the 24-hour history when a requested hour is not cached yet,
    // then the latest value when the newest requested hour is still missing.
    [[nodiscard]] Result<std::vector<HourlyRate>> intensities(const std::vector<UtcTime>& hours) override;

    // The original's two calls: GET /v3/carbon-intensity/latest and /history.
    [[nodiscard]] Result<HourlyRate> latest();
    [[nodiscard]] Result<std::vector<HourlyRate>> history();

  private:
    struct State;
    explicit ElectricityMaps(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// GET http://ipinfo.io/json (or `base_url`), parses "loc": "lat,lon". Only
// for callers who asked for it; the result's `source` says it was guessed.
[[nodiscard]] Result<GeoLocation> locate_by_ip(const std::string& base_url = "https://ipinfo.io");

}  // namespace zeus::carbon
