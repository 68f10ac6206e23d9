#include "zeus/carbon/carbon_aware_power_limit.hpp"

#include <cmath>
#include <mutex>

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

namespace {

// Chooses with the intensity it reads at select() and remembers it, so that
// stale() can tell when the grid moved past the threshold since.
class CarbonAwareSelector final : public optimizer::OptimumSelector {
  public:
    CarbonAwareSelector(IntensityNow intensity, CarbonAwareOptions options)
        : intensity_(std::move(intensity)), options_(options) {}
    [[nodiscard]] std::string name() const override {
        std::string name = fmt::format("carbon:eta={},threshold={}", options_.eta_knob, options_.threshold);
        if (options_.reference_g_per_kwh > 0) name += fmt::format(",reference={}", options_.reference_g_per_kwh);
        if (options_.world_size) name += fmt::format(",world_size={}", *options_.world_size);
        return name;
    }
    [[nodiscard]] Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                            const optimizer::SelectionContext& context) const override {
        auto now = intensity_();
        if (!now) return now.error();
        CarbonAwareOptions options = options_;
        {
            std::lock_guard lock(mutex_);
            if (options.reference_g_per_kwh <= 0) {
                if (!first_) first_ = *now;
                options.reference_g_per_kwh = *first_;
            }
        }
        auto selector = carbon_cost_selector(*now, options);
        if (!selector) return selector.error();
        auto limit = (*selector)->select(measurements, context);
        if (limit) {
            std::lock_guard lock(mutex_);
            chosen_at_ = *now;
        }
        return limit;
    }
    [[nodiscard]] bool stale() const override {
        std::optional<double> chosen_at;
        {
            std::lock_guard lock(mutex_);
            chosen_at = chosen_at_;
        }
        if (!chosen_at) return false;
        auto now = intensity_();
        return now && std::abs(*now - *chosen_at) > options_.threshold * *chosen_at;
    }

  private:
    IntensityNow intensity_;
    CarbonAwareOptions options_;
    mutable std::mutex mutex_;
    mutable std::optional<double> first_;      // the reference when none was given
    mutable std::optional<double> chosen_at_;  // the intensity of the last choice
};

}  // namespace

IntensityNow intensity_now(std::shared_ptr<CarbonIntensityProvider> provider, std::function<UtcTime()> clock) {
    return [provider = std::move(provider), clock = std::move(clock)]() -> Result<double> {
        const UtcTime hour = hour_floor(clock());
        auto rates = provider->intensities({hour});
        if (!rates) return rates.error();
        const HourlyRate* best = nullptr;
        for (const auto& r : *rates) {
            const bool at_or_before = r.hour <= hour;
            if (best == nullptr) {
                best = &r;
            } else if (at_or_before && (best->hour > hour || r.hour > best->hour)) {
                best = &r;  // the latest hour at or before now
            } else if (!at_or_before && best->hour > hour && r.hour < best->hour) {
                best = &r;  // else the earliest after
            }
        }
        if (best == nullptr) {
            return Error{ErrorCode::NoData,
                         fmt::format("{} ({}) has no carbon intensity for {}", provider->provider(), provider->zone(),
                                     format_utc(hour)),
                         "give a provider or file that covers the current hour", 0};
        }
        return best->per_kwh;
    };
}

Result<optimizer::SelectorPtr> carbon_aware_selector(IntensityNow intensity, CarbonAwareOptions options) {
    if (!intensity) {
        return Error{ErrorCode::InvalidArgument, "the carbon selector has no carbon intensity to read",
                     "give one: --carbon-intensity G, --carbon-file PATH or --carbon-zone ZONE", 0};
    }
    if (!std::isfinite(options.threshold) || options.threshold < 0) {
        return Error{ErrorCode::InvalidArgument, fmt::format("threshold {} is not at least 0", options.threshold),
                     "give the relative intensity change that re-selects, e.g. 0.1 for 10%", 0};
    }
    if (options.reference_g_per_kwh != 0) {
        if (auto ok = check_intensity(options.reference_g_per_kwh, "reference intensity"); !ok) return ok.error();
    }
    if (auto probe = optimizer::zeus_cost(options.eta_knob, options.world_size); !probe) return probe.error();
    return optimizer::SelectorPtr(std::make_shared<CarbonAwareSelector>(std::move(intensity), options));
}

Result<optimizer::SelectorPtr> parse_selector_with_carbon(std::string_view spec, IntensityNow intensity) {
    const auto colon = spec.find(':');
    if (spec.substr(0, colon) != "carbon") return optimizer::parse_selector(spec);
    auto settings = optimizer::parse_selector_settings(
        spec, colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1));
    if (!settings) return settings.error();
    CarbonAwareOptions options;
    for (const auto& [key, value] : *settings) {
        if (key == "eta" || key == "eta_knob") {
            options.eta_knob = value;
        } else if (key == "threshold") {
            options.threshold = value;
        } else if (key == "reference") {
            if (!(value > 0)) return optimizer::bad_spec(spec, "reference must be an intensity above 0 gCO2eq/kWh");
            options.reference_g_per_kwh = value;
        } else if (key == "world_size") {
            auto n = optimizer::parse_world_size(spec, value);
            if (!n) return n.error();
            options.world_size = *n;
        } else {
            return optimizer::bad_spec(spec, fmt::format("unknown setting '{}'", key));
        }
    }
    return carbon_aware_selector(std::move(intensity), options);
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
