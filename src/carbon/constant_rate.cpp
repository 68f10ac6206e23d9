#include "carbon/constant_rate.hpp"

#include <cmath>

#include <fmt/format.h>

namespace zeus::carbon {

std::vector<HourlyRate> every_hour(const std::vector<UtcTime>& hours, double per_kwh) {
    std::vector<HourlyRate> rates;
    rates.reserve(hours.size());
    for (const UtcTime hour : hours) rates.push_back(HourlyRate{hour, per_kwh, hour, false});
    return rates;
}

std::optional<Error> check_per_kwh(double per_kwh, const char* what, const char* flag) {
    if (std::isfinite(per_kwh) && per_kwh >= 0) return std::nullopt;
    return Error{ErrorCode::InvalidArgument, fmt::format("{} {} is not a number of at least 0", what, per_kwh),
                 fmt::format("give {} per kWh, e.g. {}", what, flag), 0};
}

}  // namespace zeus::carbon
