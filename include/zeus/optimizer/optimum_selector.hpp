// Which power limit is "best" once every candidate has been profiled: the
// original's optimum selectors, with its formulas and tie rules.
//
//   auto selector = zeus::optimizer::max_slowdown_constraint(1.1).value();
//   zeus::Milliwatts best = selector->select(measurements, {.world_size = 4}).value();
//
// Measurements are in profiling order (the highest limit first). Where two
// candidates score the same, the one that comes first wins, as in the original.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus::optimizer {

// What one power limit cost over one profiling window, summed over every
// monitored GPU of every rank (energy) and the slowest rank (time).
struct PowerLimitMeasurement {
    Milliwatts power_limit{0};
    Joules energy{0.0};
    Seconds time{0.0};
};

struct SelectionContext {
    // Number of GPUs whose energy the measurements sum (every rank's). Used
    // by ZeusCost when it was not given a world size of its own.
    int world_size = 1;
};

class OptimumSelector {
  public:
    OptimumSelector() = default;
    OptimumSelector(const OptimumSelector&) = delete;
    OptimumSelector& operator=(const OptimumSelector&) = delete;
    virtual ~OptimumSelector() = default;

    // Short, parseable description, e.g. "zeus-cost:eta=0.5".
    [[nodiscard]] virtual std::string name() const = 0;
    // The chosen limit; an error when `measurements` is empty or lacks what
    // the rule needs.
    [[nodiscard]] virtual Result<Milliwatts> select(std::span<const PowerLimitMeasurement> measurements,
                                                    const SelectionContext& context) const = 0;
    // True when this selector's last choice has gone stale because something
    // outside the profile moved (the carbon selector: the grid's intensity
    // moved past its threshold since it chose); the optimizer then selects
    // again. Cheap; the optimizer asks at most every reselect_period.
    [[nodiscard]] virtual bool stale() const { return false; }
};

using SelectorPtr = std::shared_ptr<const OptimumSelector>;

// argmin time.
[[nodiscard]] SelectorPtr time_selector();
// argmin energy.
[[nodiscard]] SelectorPtr energy_selector();
// argmin eta·E + (1 − eta)·MaxPower·T, MaxPower = max(profiled limit) × world_size.
// eta in [0, 1]; world_size ≥ 1, or nullopt to take it from the context
// (every GPU the energy sums over, which avoids the original's DDP trap
// where one rank's GPU count under-weights time).
[[nodiscard]] Result<SelectorPtr> zeus_cost(double eta_knob, std::optional<int> world_size = std::nullopt);
// The lowest limit whose time is at most factor × the time at the maximum
// profiled limit (factor ≥ 1).
[[nodiscard]] Result<SelectorPtr> max_slowdown_constraint(double factor);

// Parses the names above: "time", "energy", "zeus-cost[:eta=E][,world_size=N]"
// (eta 0.5 by default), "max-slowdown:F". Errors list the accepted forms.
[[nodiscard]] Result<SelectorPtr> parse_selector(std::string_view spec);

// For selectors defined elsewhere (carbon/): the "k=v,k=v" settings after a
// spec's colon, in order; an InvalidArgument error naming `spec` and the
// accepted forms for a malformed one (bad_spec builds the same error).
[[nodiscard]] Result<std::vector<std::pair<std::string, double>>> parse_selector_settings(std::string_view spec,
                                                                                        std::string_view arguments);
[[nodiscard]] Result<int> parse_world_size(std::string_view spec, double value);
[[nodiscard]] Error bad_spec(std::string_view spec, std::string_view why);

}  // namespace zeus::optimizer
