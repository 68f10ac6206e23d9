// ISO 8601 UTC timestamps as ElectricityMaps and users write them.
#pragma once

#include <optional>
#include <string_view>

#include "zeus/carbon/hourly_rate.hpp"

namespace zeus::carbon {

// "2024-11-30T06:00:00.000Z", "2024-11-30T06:00:00Z", "2024-11-30T06:00:00+00:00",
// "2024-11-30 06:00" (a space for T, seconds optional, no zone = UTC);
// other offsets (+02:00) are applied. nullopt when it is none of these.
[[nodiscard]] std::optional<UtcTime> parse_utc(std::string_view text);

}  // namespace zeus::carbon

namespace zeus::carbon {

// Where a UTC hour falls on a tariff's clock (UTC shifted by a whole number of hours).
struct TariffHour {
    unsigned month = 1;    // 1..12
    unsigned weekday = 0;  // 0 = Sunday .. 6 = Saturday
    unsigned hour = 0;     // 0..23
    [[nodiscard]] bool weekend() const { return weekday == 0 || weekday == 6; }
};
[[nodiscard]] TariffHour tariff_hour(UtcTime utc_hour, int utc_offset_hours);

}  // namespace zeus::carbon
