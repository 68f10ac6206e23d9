#include "zeus/carbon/carbon_aware_power_limit.hpp"

#include <cmath>

#include <fmt/format.h>

namespace zeus::carbon {

namespace {

using optimizer::PowerLimitMeasurement;

// ZeusCost over energies priced by the intensity: the original's selector,
// so its formula and tie rule stay in one place.
class CarbonCostSelector final : public optimizer::OptimumSelector {
  public:
    CarbonCostSelector(optimizer::SelectorPtr zeus_cost, double scale, std::string name)
        : zeus_cost_(std::move(zeus_cost)), scale_(scale), name_(std::move(name)) {}
    [[nodiscard]] std::string name() const override { return name_; }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const optimizer::SelectionContext& context) const override {
        std::vector<PowerLimitMeasurement> priced(measurements.begin(), measurements.end());
        for (auto& m : priced) m.energy = Joules(m.energy.count() * scale_);
        return zeus_cost_->select(priced, context);
    }

  private:
    optimizer::SelectorPtr zeus_cost_;
    double scale_;
    std::string name_;
};

Status check_intensity(double g, const char* what) {
    if (std::isfinite(g) && g > 0) return {};
    return Error{ErrorCode::InvalidArgument, fmt::format("{} {} gCO2eq/kWh is not a number above 0", what, g),
                 "give a positive carbon intensity", 0};
}

}  // namespace

Result<optimizer::SelectorPtr> carbon_cost_selector(double current_g_per_kwh, const CarbonAwareOptions& options) {
    if (auto ok = check_intensity(options.reference_g_per_kwh, "reference intensity"); !ok) return ok.error();
    if (auto ok = check_intensity(current_g_per_kwh, "current intensity"); !ok) return ok.error();
    auto zeus_cost = optimizer::zeus_cost(options.eta_knob, options.world_size);
    if (!zeus_cost) return zeus_cost.error();
    return optimizer::SelectorPtr(std::make_shared<CarbonCostSelector>(
        std::move(zeus_cost).value(), current_g_per_kwh / options.reference_g_per_kwh,
        fmt::format("carbon-cost:eta={},intensity={},reference={}", options.eta_knob, current_g_per_kwh,
                    options.reference_g_per_kwh)));
}

Result<CarbonAwarePowerLimit> CarbonAwarePowerLimit::create(std::vector<PowerLimitMeasurement> profile,
                                                            CarbonAwareOptions options,
                                                            optimizer::SelectionContext context) {
    if (profile.empty()) {
        return Error{ErrorCode::InvalidArgument, "no profiled power limits to choose from",
                     "profile the power limits first (GlobalPowerLimitOptimizer's profile file)", 0};
    }
    if (!std::isfinite(options.threshold) || options.threshold < 0) {
        return Error{ErrorCode::InvalidArgument, fmt::format("threshold {} is not at least 0", options.threshold),
                     "give the relative intensity change that re-selects, e.g. 0.1 for 10%", 0};
    }
    // Checks eta and the reference now rather than at the first update.
    auto probe = carbon_cost_selector(options.reference_g_per_kwh > 0 ? options.reference_g_per_kwh : 1.0, options);
    if (!probe) return probe.error();
    if (auto ok = check_intensity(options.reference_g_per_kwh, "reference intensity"); !ok) return ok.error();
    return CarbonAwarePowerLimit(std::move(profile), options, context);
}

Result<CarbonAwarePowerLimit::Decision> CarbonAwarePowerLimit::update(double current_g_per_kwh) {
    if (auto ok = check_intensity(current_g_per_kwh, "current intensity"); !ok) return ok.error();
    if (last_ && std::abs(current_g_per_kwh - last_->chosen_at_g_per_kwh) <=
                     options_.threshold * last_->chosen_at_g_per_kwh) {
        Decision same = *last_;
        same.changed = false;
        same.reevaluated = false;
        return same;
    }
    auto selector = carbon_cost_selector(current_g_per_kwh, options_);
    if (!selector) return selector.error();
    auto limit = (*selector)->select(profile_, context_);
    if (!limit) return limit.error();
    Decision d{*limit, current_g_per_kwh, !last_ || last_->power_limit != *limit, true};
    last_ = d;
    return d;
}

}  // namespace zeus::carbon
