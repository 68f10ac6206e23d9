// What the constant providers (constant_intensity, constant_price) share:
// one user-given number for every hour, checked once.
#pragma once

#include <optional>
#include <vector>

#include "zeus/carbon/hourly_rate.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::carbon {

// `per_kwh` for each of `hours`, as the provider's own value (not estimated).
[[nodiscard]] std::vector<HourlyRate> every_hour(const std::vector<UtcTime>& hours, double per_kwh);

// An error naming `what` and an example `flag` unless `per_kwh` is a finite number >= 0.
[[nodiscard]] std::optional<Error> check_per_kwh(double per_kwh, const char* what, const char* flag);

}  // namespace zeus::carbon
