#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "zeus/lowtime/cost_model.hpp"

namespace zeus::lowtime {
namespace {

CandidateExecutionOptions sampled(double a, double b, double c, int q_from, int q_to) {
    std::vector<ExecutionOption> options;
    for (int q = q_from; q <= q_to; q += 2)
        options.push_back({(q + 0.5) * 0.001, 0.001, a * std::exp(b * q) + c, q});  // Perseus's 1 ms quanta
    return CandidateExecutionOptions(options);
}

TEST(ExponentialModel, RecoversExactExponentialData) {
    const auto options = sampled(300.0, -0.04, 25.0, 20, 80);
    const auto model = fit_exponential_model(options);
    EXPECT_NEAR(model.coefficients().a, 300.0, 1e-4 * 300.0);
    EXPECT_NEAR(model.coefficients().b, -0.04, 1e-6);
    EXPECT_NEAR(model.coefficients().c, 25.0, 1e-4 * 25.0);
    for (const auto& o : options.options()) EXPECT_NEAR(model.cost(o.quant_time()), o.cost, 1e-6 * o.cost);
}

TEST(ExponentialModel, BestFitIsNoWorseThanAnyGridStart) {
    // Noisy, non-exponential data: the chosen fit has the lowest MSE among the grid's fits.
    std::vector<ExecutionOption> raw;
    for (int q = 30; q <= 60; ++q) raw.push_back({q * 0.001 + 0.0004, 0.001, 900.0 / q + 0.01 * (q % 3), q});
    CandidateExecutionOptions options(raw, 0.95);
    const auto model = fit_exponential_model(options);
    const double chosen = exponential_mse(options, model.coefficients());
    EXPECT_GE(model.coefficients().a, 0.0);
    for (double a : {1e1, 1e2, 1e3})
        for (double k : {0.01, 0.02, 0.03, 0.04, 0.05, 0.1})
            for (double c : {1e1, 1e2, 1e3}) {
                const auto fit = fit_exponential_from(options, {a, -k, c});
                if (fit && fit->a >= 0.0) {
                    EXPECT_LE(chosen, exponential_mse(options, *fit));
                }
            }
}

TEST(ExponentialModel, TooFewPointsCannotBeFitted) {
    // Three points leave curve_fit no degrees of freedom (infinite covariance).
    CandidateExecutionOptions three({{10.0, 1.0, 5.0, 1}, {12.0, 1.0, 4.0, 2}, {15.0, 1.0, 3.5, 3}});
    EXPECT_FALSE(fit_exponential_from(three, {10.0, -0.1, 1.0}).has_value());
    EXPECT_THROW((void)fit_exponential_model(three), std::invalid_argument);
}

}  // namespace
}  // namespace zeus::lowtime
