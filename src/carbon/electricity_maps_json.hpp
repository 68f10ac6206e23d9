// The ElectricityMaps answer shapes, read by the API provider and by the
// file provider (saved answers, as in data/carbon/).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/carbon/hourly_rate.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::carbon {

struct ElectricityMapsSeries {
    std::string zone;               // "" when the answer does not say
    std::vector<HourlyRate> rates;  // entries with a null carbonIntensity are left out (a gap)
};

// One /latest object or one /history entry: {"datetime", "carbonIntensity", "isEstimated", "zone"}.
// `where` names it in errors ("history entry 3 of ...").
[[nodiscard]] Result<ElectricityMapsSeries> read_electricity_maps_entry(const nlohmann::json& entry,
                                                                        const std::string& where);
// {"zone", "history": [...]} or a /latest object.
[[nodiscard]] Result<ElectricityMapsSeries> read_electricity_maps(const nlohmann::json& answer,
                                                                  const std::string& where);

}  // namespace zeus::carbon
