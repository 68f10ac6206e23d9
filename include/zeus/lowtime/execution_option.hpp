// One way to run an operation (a knob value, e.g. an SM frequency in MHz) and
// the Pareto-filtered set an operation chooses from, as lowtime defines them.
#pragma once

#include <cstdint>
#include <vector>

namespace zeus::lowtime {

using Knob = std::int64_t;

struct ExecutionOption {
    double real_time = 0.0;  // seconds (or any unit shared with unit_time)
    double unit_time = 0.0;  // the quantum of time
    double cost = 0.0;
    Knob knob = 0;

    // int(real_time // unit_time), with Python's floor division.
    [[nodiscard]] int quant_time() const;
};

// lowtime's CandidateExecutionOptions:
//  1. drop an option when another has real_time < rt*nf and cost < c*nf;
//  2. of options sharing a quant_time keep the one with the largest cost (the
//     one whose quant_time is closest to its real_time);
//  3. sort by quant_time, descending.
// Ties are broken as Python's stable sorts break them.
class CandidateExecutionOptions {
public:
    // Throws std::invalid_argument when `options` is empty, unit times differ,
    // or a time/cost is not finite or a time is not positive.
    explicit CandidateExecutionOptions(std::vector<ExecutionOption> options, double noise_factor = 1.0);

    [[nodiscard]] const std::vector<ExecutionOption>& options() const { return options_; }
    [[nodiscard]] double unit_time() const { return options_.front().unit_time; }
    [[nodiscard]] int min_quant_time() const { return options_.back().quant_time(); }
    [[nodiscard]] int max_quant_time() const { return options_.front().quant_time(); }

    // The knob of the slowest option that still fits in `quant_time`; the
    // fastest option's knob when nothing fits.
    [[nodiscard]] Knob knob_for(int quant_time) const;

private:
    std::vector<ExecutionOption> options_;  // quant_time descending
};

}  // namespace zeus::lowtime
