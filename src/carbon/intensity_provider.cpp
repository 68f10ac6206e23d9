// The constant carbon-intensity provider: one user-given number for every hour.
#include "zeus/carbon/intensity_provider.hpp"

#include "carbon/constant_rate.hpp"

namespace zeus::carbon {

namespace {

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

}  // namespace

Result<std::unique_ptr<CarbonIntensityProvider>> constant_intensity(double g_per_kwh, std::string zone) {
    if (auto bad = check_per_kwh(g_per_kwh, "carbon intensity (gCO2eq/kWh)", "--carbon-intensity 350")) return *bad;
    return std::unique_ptr<CarbonIntensityProvider>(std::make_unique<ConstantIntensity>(g_per_kwh, std::move(zone)));
}

}  // namespace zeus::carbon
