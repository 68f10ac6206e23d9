#include "zeus/lowtime/execution_option.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include "zeus/lowtime/python_floordiv.hpp"

namespace zeus::lowtime {

int ExecutionOption::quant_time() const {
    const double q = python_floordiv(real_time, unit_time);
    // Callers bound real_time / unit_time (perseus_plan: 1e6); a cast beyond int is undefined.
    if (!(q >= 0.0 && q <= static_cast<double>(std::numeric_limits<int>::max())))
        throw std::invalid_argument("execution option with knob " + std::to_string(knob) + ": " +
                                    std::to_string(real_time) + " / unit time " + std::to_string(unit_time) +
                                    " is not a quantized time the solver can hold");
    return static_cast<int>(q);
}

CandidateExecutionOptions::CandidateExecutionOptions(std::vector<ExecutionOption> options, double noise_factor) {
    if (options.empty()) throw std::invalid_argument("an operation needs at least one execution option");
    for (const auto& o : options) {
        if (!std::isfinite(o.real_time) || !std::isfinite(o.cost) || o.real_time <= 0.0)
            throw std::invalid_argument("execution option with knob " + std::to_string(o.knob) +
                                        ": time must be positive and time and cost finite");
        if (!(o.unit_time > 0.0)) throw std::invalid_argument("unit_time must be positive");
        if (o.unit_time != options.front().unit_time)
            throw std::invalid_argument("all execution options of an operation must share one unit_time");
    }
    std::stable_sort(options.begin(), options.end(),
                     [](const ExecutionOption& x, const ExecutionOption& y) { return x.real_time > y.real_time; });
    std::vector<ExecutionOption> pareto;
    for (const auto& option : options) {
        const double rt = option.real_time * noise_factor;
        const double c = option.cost * noise_factor;
        const bool dominated = std::any_of(options.begin(), options.end(), [&](const ExecutionOption& other) {
            return other.real_time < rt && other.cost < c;
        });
        if (!dominated) pareto.push_back(option);
    }
    std::stable_sort(pareto.begin(), pareto.end(),
                     [](const ExecutionOption& x, const ExecutionOption& y) { return x.cost > y.cost; });
    std::set<int> seen;
    for (const auto& option : pareto)
        if (seen.insert(option.quant_time()).second) options_.push_back(option);
    std::stable_sort(options_.begin(), options_.end(), [](const ExecutionOption& x, const ExecutionOption& y) {
        return x.quant_time() > y.quant_time();
    });
    if (options_.empty()) throw std::invalid_argument("no execution option survived Pareto filtering");
}

Knob CandidateExecutionOptions::knob_for(int quant_time) const {
    // options_ is quant_time descending: the first one <= quant_time is the
    // slowest that fits.
    for (const auto& option : options_)
        if (option.quant_time() <= quant_time) return option.knob;
    return options_.back().knob;
}

}  // namespace zeus::lowtime
