// Carbon intensity from a file, for offline use: a CSV time series
//   datetime,carbon_intensity[,is_estimated][,zone]
//   2024-12-01T06:00:00Z,419,false,US-MIDW-MISO
// or a saved ElectricityMaps answer (the /history shape {"zone", "history":
// [...]}, as in data/carbon/, or the /latest shape). Hours the file does not
// cover are absent, never guessed.
#pragma once

#include <memory>
#include <string>

#include "zeus/carbon/intensity_provider.hpp"

namespace zeus::carbon {

// Errors name the file, the line or entry, the problem and the fix.
[[nodiscard]] Result<std::unique_ptr<CarbonIntensityProvider>> intensity_from_file(const std::string& path);

}  // namespace zeus::carbon
