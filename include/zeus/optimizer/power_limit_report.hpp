// What profiling the power limits found, in numbers a person can act on:
// time and energy per limit (per step when the step count is known), which
// limit each selector picks, and what that saves against the maximum limit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "zeus/optimizer/optimum_selector.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::optimizer {

struct PowerLimitRow {
    Milliwatts power_limit{0};
    Seconds time{0.0};  // per window
    Joules energy{0.0};
    Watts average_power{0.0};  // energy / time (all GPUs)
    std::optional<Seconds> time_per_step;
    std::optional<Joules> energy_per_step;
};

struct SelectorChoice {
    std::string selector;  // OptimumSelector::name()
    Milliwatts power_limit{0};
    // Against the maximum profiled limit: 1 − E/E_max and T/T_max − 1.
    double energy_saving = 0.0;
    double slowdown = 0.0;
    bool in_use = false;  // the selector the optimizer went with
};

struct PowerLimitReport {
    std::vector<PowerLimitRow> rows;  // in profiling order
    int world_size = 1;
    std::optional<std::size_t> profile_steps;
    std::vector<SelectorChoice> choices;
    std::vector<std::string> warnings;  // about the measurements

    // A table of the rows, then one line per choice.
    [[nodiscard]] std::string to_string() const;
    [[nodiscard]] std::string to_json() const;  // one JSON object
};

// `selectors` in the order to report them; the first one is marked in_use.
// Errors: no measurements, or a selector's own error.
[[nodiscard]] Result<PowerLimitReport> make_power_limit_report(const std::vector<PowerLimitMeasurement>& measurements,
                                                               const std::vector<SelectorPtr>& selectors,
                                                               const SelectionContext& context,
                                                               std::optional<std::size_t> profile_steps);

// The selectors a report compares by default: time, energy, zeus-cost at
// eta 0.5, max-slowdown 1.1.
[[nodiscard]] std::vector<SelectorPtr> standard_selectors();

}  // namespace zeus::optimizer
