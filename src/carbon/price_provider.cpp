// The constant electricity-price provider: one user-given number for every hour.
#include "zeus/carbon/price_provider.hpp"

#include "carbon/constant_rate.hpp"

namespace zeus::carbon {

namespace {

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

Result<std::unique_ptr<ElectricityPriceProvider>> constant_price(double per_kwh, std::string currency) {
    if (auto bad = check_per_kwh(per_kwh, "electricity price", "--price 0.12")) return *bad;
    return std::unique_ptr<ElectricityPriceProvider>(std::make_unique<ConstantPrice>(per_kwh, std::move(currency)));
}

}  // namespace zeus::carbon
