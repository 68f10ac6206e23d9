// Beyond the original: a carbon-aware power limit. The power-limit
// optimizer's ZeusCost trades energy against time with a fixed knob; here
// energy is priced by how dirty the grid is now relative to a reference,
//
//   cost = eta · E · (I_now / I_ref) + (1 − eta) · MaxPower · T,
//
// so a dirtier hour moves the choice towards less energy and a cleaner hour
// towards less time; at I_now = I_ref it is ZeusCost exactly. The choice is
// re-evaluated only when the intensity moved by more than a threshold since
// the limit was chosen, so the limit does not flap with every small change.
//
//   auto tuner = zeus::carbon::CarbonAwarePowerLimit::create(profile.measurements, {.reference_g_per_kwh = 460}).value();
//   every hour: auto d = tuner.update(current_intensity).value(); if (d.changed) set d.power_limit on the GPUs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "zeus/carbon/intensity_provider.hpp"
#include "zeus/optimizer/optimum_selector.hpp"

namespace zeus::carbon {

struct CarbonAwareOptions {
    double eta_knob = 0.5;             // as ZeusCost's, in [0, 1]
    double reference_g_per_kwh = 0;    // > 0: the intensity at which the choice is ZeusCost's (e.g. the day's mean)
    double threshold = 0.1;            // relative intensity change that triggers a re-selection, >= 0
    std::optional<int> world_size;     // as ZeusCost's
};

// The selector for one intensity: ZeusCost over the profile with each energy
// scaled by current / reference. Errors: bad eta, reference or intensity.
[[nodiscard]] Result<optimizer::SelectorPtr> carbon_cost_selector(double current_g_per_kwh,
                                                                 const CarbonAwareOptions& options);

// The grid's intensity now (gCO2eq/kWh); an error when it cannot be had.
using IntensityNow = std::function<Result<double>()>;

// The provider's intensity for the UTC hour `clock` says it is (the latest
// hour it has at or before it, else the earliest after).
[[nodiscard]] IntensityNow intensity_now(
    std::shared_ptr<CarbonIntensityProvider> provider, std::function<UtcTime()> clock = [] {
        return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    });

// The carbon-aware selector for GlobalPowerLimitOptimizer: each select()
// reads the intensity now and chooses as carbon_cost_selector; stale() says
// whether the intensity moved by more than `threshold` (relative) since, so
// that the optimizer selects again. reference_g_per_kwh 0: the intensity at
// the first choice (that choice is then ZeusCost's). An intensity that cannot
// be read makes select() fail and stale() answer false (the limit stays).
[[nodiscard]] Result<optimizer::SelectorPtr> carbon_aware_selector(IntensityNow intensity, CarbonAwareOptions options);

// parse_selector's forms plus "carbon[:eta=E][,threshold=T][,reference=R][,world_size=N]"
// (eta 0.5, threshold 0.1, reference = the first intensity), which reads `intensity`
// (required only for that form).
[[nodiscard]] Result<optimizer::SelectorPtr> parse_selector_with_carbon(std::string_view spec, IntensityNow intensity);

class CarbonAwarePowerLimit {
  public:
    // `profile`: one measurement per profiled limit (the optimizer's profile file).
    [[nodiscard]] static Result<CarbonAwarePowerLimit> create(std::vector<optimizer::PowerLimitMeasurement> profile,
                                                              CarbonAwareOptions options,
                                                              optimizer::SelectionContext context = {});

    struct Decision {
        Milliwatts power_limit{0};
        double chosen_at_g_per_kwh = 0;  // the intensity the limit was chosen for
        bool changed = false;            // differs from the previous decision's limit
        bool reevaluated = false;        // the intensity moved past the threshold (or first call)
    };
    // The limit for the intensity now.
    [[nodiscard]] Result<Decision> update(double current_g_per_kwh);

  private:
    CarbonAwarePowerLimit(std::vector<optimizer::PowerLimitMeasurement> profile, CarbonAwareOptions options,
                          optimizer::SelectionContext context)
        : profile_(std::move(profile)), options_(options), context_(context) {}
    std::vector<optimizer::PowerLimitMeasurement> profile_;
    CarbonAwareOptions options_;
    optimizer::SelectionContext context_;
    std::optional<Decision> last_;
};

}  // namespace zeus::carbon
