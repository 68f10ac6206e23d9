// Electricity prices from the OpenEI Utility Rate Database (API version
// "latest"): the rate whose `label` matches, its energy rate structure and
// weekday/weekend schedules, as the original's OpenEIClient. The API key
// comes from OPENEI_API_KEY, never from the code.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zeus/carbon/electricity_maps.hpp"
#include "zeus/carbon/price_provider.hpp"

namespace zeus::carbon {

inline constexpr const char* kOpenEiKeyVariable = "OPENEI_API_KEY";

struct OpenEiOptions {
    GeoLocation location;
    std::string label;                     // the rate's unique label
    std::string sector = "Residential";    // Residential, Commercial, Industrial, Lighting
    int radius = 0;                        // miles around the location
    // The schedules are in the utility's local time; the original looks them
    // up by the UTC hour. 0 keeps that; set the utility's offset from UTC
    // (e.g. -5) to look up local hours.
    int utc_offset_hours = 0;
    std::string base_url = "https://api.openei.org";
    std::optional<std::string> api_key;    // nullopt: read OPENEI_API_KEY
};

// Fetches the rates once, on the first prices() call; the schedule then
// answers for any hour. Errors: bad sector/label/offset, no key (InvalidConfig).
[[nodiscard]] Result<std::unique_ptr<ElectricityPriceProvider>> openei_prices(OpenEiOptions options);

// The rate labelled options.label as OpenEI sends it (its JSON object, fetched
// now), for the original's OpenEIClient.get_current_electricity_prices().
// Errors: as openei_prices, the request's, NotFound for no such label.
[[nodiscard]] Result<std::string> openei_rate_json(OpenEiOptions options);

}  // namespace zeus::carbon
