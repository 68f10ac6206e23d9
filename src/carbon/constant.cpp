// The constant providers: one user-given number for every hour.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "zeus/carbon/intensity_provider.hpp"
#include "zeus/carbon/price_provider.hpp"

namespace zeus::carbon {

namespace {

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

class ConstantIntensity final : public CarbonIntensityProvider {
  public:
    ConstantIntensity(double g_per_kwh, std::string zone) : g_per_kwh_(g_per_kwh), zone_(std::move(zone)) {}
    [[nodiscard]] std::string provider() const override { return "constant"; }
    [[nodiscard]] std::string zone() const override { return zone_.empty() ? "unspecified" : zone_; }
    [[nodiscard]] Result<std::vector<HourlyRate>> intensities(const std::vector<UtcTime>& hours) override {
        return every_hour(hours, g_per_kwh_);
    }

  private:
    double g_per_kwh_;
    std::string zone_;
};

class ConstantPrice final : public ElectricityPriceProvider {
  public:
    ConstantPrice(double per_kwh, std::string currency) : per_kwh_(per_kwh), currency_(std::move(currency)) {}
    [[nodiscard]] std::string provider() const override { return "constant"; }
    [[nodiscard]] std::string zone() const override { return "unspecified"; }
    [[nodiscard]] std::string currency() const override { return currency_; }
    [[nodiscard]] Result<std::vector<HourlyRate>> prices(const std::vector<UtcTime>& hours) override {
        return every_hour(hours, per_kwh_);
    }

  private:
    double per_kwh_;
    std::string currency_;
};

}  // namespace

Result<std::unique_ptr<CarbonIntensityProvider>> constant_intensity(double g_per_kwh, std::string zone) {
    if (auto bad = check_per_kwh(g_per_kwh, "carbon intensity (gCO2eq/kWh)", "--carbon-intensity 350")) return *bad;
    return std::unique_ptr<CarbonIntensityProvider>(std::make_unique<ConstantIntensity>(g_per_kwh, std::move(zone)));
}

Result<std::unique_ptr<ElectricityPriceProvider>> constant_price(double per_kwh, std::string currency) {
    if (auto bad = check_per_kwh(per_kwh, "electricity price", "--price 0.12")) return *bad;
    return std::unique_ptr<ElectricityPriceProvider>(std::make_unique<ConstantPrice>(per_kwh, std::move(currency)));
}

}  // namespace zeus::carbon
