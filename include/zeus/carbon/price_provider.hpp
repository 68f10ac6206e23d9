// Where electricity prices come from: OpenEI utility rates (openei.hpp), a
// constant, or a time-of-use table from a file (price_file.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/carbon/hourly_rate.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::carbon {

class ElectricityPriceProvider {
  public:
    ElectricityPriceProvider() = default;
    ElectricityPriceProvider(const ElectricityPriceProvider&) = delete;
    ElectricityPriceProvider& operator=(const ElectricityPriceProvider&) = delete;
    virtual ~ElectricityPriceProvider() = default;

    // "OpenEI", "constant", "file tariffs.csv".
    [[nodiscard]] virtual std::string provider() const = 0;
    // The tariff it applies: "OpenEI rate 5cc8.. (Residential) at lat 42.28, lon -83.74".
    [[nodiscard]] virtual std::string zone() const = 0;
    // "USD", or what the user said; "" when unknown.
    [[nodiscard]] virtual std::string currency() const = 0;

    // As CarbonIntensityProvider::intensities, in currency per kWh.
    [[nodiscard]] virtual Result<std::vector<HourlyRate>> prices(const std::vector<UtcTime>& hours) = 0;
};

// The same price for every hour (--price 0.12).
[[nodiscard]] Result<std::unique_ptr<ElectricityPriceProvider>> constant_price(double per_kwh,
                                                                              std::string currency = "");

}  // namespace zeus::carbon
