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

#include <optional>
#include <vector>

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
