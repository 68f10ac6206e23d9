// A time-of-use price table from a CSV file, for offline use:
//   days,start_hour,end_hour,price_per_kwh[,months]
//   weekday,0,7,0.08
//   weekday,7,19,0.21
//   weekend,0,24,0.08
//   all,19,24,0.12
// days: all, weekday, weekend, or mon..sun; hours are UTC (or shifted by
// utc_offset_hours), start inclusive, end exclusive; months (optional, e.g.
// "6-9" or "12") narrow a row to those months. The first matching row wins;
// an hour no row covers has no price (reported, never 0).
#pragma once

#include <memory>
#include <string>

#include "zeus/carbon/price_provider.hpp"

namespace zeus::carbon {

[[nodiscard]] Result<std::unique_ptr<ElectricityPriceProvider>> prices_from_file(const std::string& path,
                                                                                std::string currency = "",
                                                                                int utc_offset_hours = 0);

}  // namespace zeus::carbon
