#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include <tuple>
#include <vector>

#include "minpack_lm.hpp"
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

// Stage 0 forward of a generated profile (lowtime_parity.py --random 51):
// six Pareto-optimal options, (quant_time, effective energy).
CandidateExecutionOptions generated_stage() {
    const std::vector<std::pair<int, double>> points{{49, 8.93052047476977},  {48, 9.310089927742723},
                                                     {47, 9.920014357194436}, {46, 10.175952814084427},
                                                     {45, 10.752027815595014}, {44, 10.893196029327674}};
    std::vector<ExecutionOption> options;
    for (const auto& [q, cost] : points) options.push_back({(q + 0.5) * 0.001, 0.001, cost, q});
    return CandidateExecutionOptions(options);
}

TEST(ExponentialModel, LmdifFollowsScipysSteps) {
    // scipy 1.17.1 leastsq (curve_fit's "lm") from two of lowtime's initial
    // guesses on these options: info 3 (both tolerances met) after 26
    // evaluations each, to
    // the same local minimum.
    const auto options = generated_stage();
    auto fit = [&](std::vector<double> x) {
        const auto result = detail::lmdif(
            [&](const std::vector<double>& p, std::vector<double>& out) {
                for (std::size_t i = 0; i < options.options().size(); ++i) {
                    const auto& o = options.options()[i];
                    out[i] = p[0] * std::exp(p[1] * o.quant_time()) + p[2] - o.cost;
                }
                return true;
            },
            options.options().size(), x);
        return std::make_tuple(result.info, result.nfev, x);
    };
    const auto [info1, nfev1, x1] = fit({10.0, -0.01, 1000.0});
    EXPECT_EQ(info1, 3);
    EXPECT_EQ(nfev1, 26);
    EXPECT_NEAR(x1[0], -73.138099494155057, 1e-9 * 73.1);
    EXPECT_NEAR(x1[1], -2.0307449965267619, 1e-9 * 2.03);
    EXPECT_NEAR(x1[2], 9.9969669031338366, 1e-9 * 10.0);
    const auto [info2, nfev2, x2] = fit({1000.0, -0.1, 1000.0});
    EXPECT_EQ(info2, 3);
    EXPECT_EQ(nfev2, 26);
    EXPECT_NEAR(x2[0], -1704.3757076153815, 1e-9 * 1704.4);
    EXPECT_NEAR(x2[1], -1.2192749246722927, 1e-9 * 1.22);
    EXPECT_NEAR(x2[2], 9.9969669033035924, 1e-9 * 10.0);
    // curve_fit's covariance there is all inf (exp(b*q) ~ 1e-40: R is
    // numerically singular), so lowtime drops both starts, and so do we.
    EXPECT_FALSE(fit_exponential_from(options, {10.0, -0.01, 1000.0}).has_value());
    EXPECT_FALSE(fit_exponential_from(options, {1000.0, -0.1, 1000.0}).has_value());
}

TEST(ExponentialModel, FitsWhatScipyFitsAndPredictsItsCosts) {
    // The previous fit refused these options ("at least 4 distinct quantized
    // times are needed"); lowtime's grid search keeps
    // (5475.6977914625322, -7.5374971985904592e-05, -5446.5424922167167), a
    // nearly linear model whose coefficients are ill-determined but whose
    // predictions are not.
    const auto options = generated_stage();
    const auto model = fit_exponential_model(options);
    const ExponentialModel scipy({5475.6977914625322, -7.5374971985904592e-05, -5446.5424922167167});
    for (const auto& o : options.options())
        EXPECT_NEAR(model.cost(o.quant_time()), scipy.cost(o.quant_time()), 1e-4 * std::abs(scipy.cost(o.quant_time())));
}

TEST(ExponentialModel, TooFewPointsCannotBeFitted) {
    // Three points leave curve_fit no degrees of freedom (infinite covariance).
    CandidateExecutionOptions three({{10.0, 1.0, 5.0, 1}, {12.0, 1.0, 4.0, 2}, {15.0, 1.0, 3.5, 3}});
    EXPECT_FALSE(fit_exponential_from(three, {10.0, -0.1, 1.0}).has_value());
    EXPECT_THROW((void)fit_exponential_model(three), std::invalid_argument);
}

}  // namespace
}  // namespace zeus::lowtime
