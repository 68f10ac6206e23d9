// Where carbon intensity comes from: ElectricityMaps (electricity_maps.hpp),
// a constant, or a time series from a file (intensity_file.hpp). Every
// provider names itself and its zone, so that every gram reported says where
// its intensity came from.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/carbon/hourly_rate.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::carbon {

class CarbonIntensityProvider {
  public:
    CarbonIntensityProvider() = default;
    CarbonIntensityProvider(const CarbonIntensityProvider&) = delete;
    CarbonIntensityProvider& operator=(const CarbonIntensityProvider&) = delete;
    virtual ~CarbonIntensityProvider() = default;

    // "ElectricityMaps", "constant", "file data/carbon/x.json".
    [[nodiscard]] virtual std::string provider() const = 0;
    // The grid zone ("US-MIDW-MISO"), a location ("lat 42.28, lon -83.74"),
    // or what the user said it is; never guessed.
    [[nodiscard]] virtual std::string zone() const = 0;

    // The intensities it has for `hours` (UTC hour starts), and any others it
    // already knows (neighbours fill gaps). An hour it has no value for is
    // simply absent; an error means the provider could not answer at all
    // (unreachable, unknown zone, malformed answer), with the provider's words.
    [[nodiscard]] virtual Result<std::vector<HourlyRate>> intensities(const std::vector<UtcTime>& hours) = 0;
};

// The same intensity for every hour (--carbon-intensity 350), for offline use.
// `zone` is what the user says the number is for ("" = "unspecified").
[[nodiscard]] Result<std::unique_ptr<CarbonIntensityProvider>> constant_intensity(double g_per_kwh,
                                                                                 std::string zone = "");

}  // namespace zeus::carbon
