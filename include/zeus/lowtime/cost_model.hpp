// Continuous cost of an operation as a function of its quantized duration.
// The solver needs only cost(q) on integer q; a model is fitted once per
// operation kind and shared by every operation of that kind.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "zeus/lowtime/execution_option.hpp"

namespace zeus::lowtime {

class CostModel {
public:
    virtual ~CostModel() = default;
    // Must be deterministic; the solver evaluates it on
    // [min_quant_time - 1, max_quant_time + 1].
    [[nodiscard]] virtual double cost(int quant_time) const = 0;
};

// cost(q) = a * exp(b * q) + c
struct ExponentialCoefficients {
    double a = 0.0;
    double b = 0.0;
    double c = 0.0;
};

class ExponentialModel final : public CostModel {
public:
    explicit ExponentialModel(ExponentialCoefficients coefficients) : coefficients_(coefficients) {}
    [[nodiscard]] double cost(int quant_time) const override;
    [[nodiscard]] const ExponentialCoefficients& coefficients() const { return coefficients_; }

private:
    ExponentialCoefficients coefficients_;
};

// scipy's curve_fit (MINPACK lmdif, see minpack_lm.hpp) of a*exp(b*q)+c to
// the options' (quant_time, cost) from `initial`. Empty when lowtime would
// drop the result: fewer than four points (no degree of freedom left), a
// covariance with +inf or NaN (a singular R), or no convergence (curve_fit
// raises there).
[[nodiscard]] std::optional<ExponentialCoefficients> fit_exponential_from(const CandidateExecutionOptions& options,
                                                                          ExponentialCoefficients initial);

// Mean squared error of `coefficients` over the options' (quant_time, cost).
[[nodiscard]] double exponential_mse(const CandidateExecutionOptions& options, const ExponentialCoefficients& coefficients);

// lowtime's ExponentialModel(options, search_strategy="best"): fits from every
// initial guess of the grid a in {1e1,1e2,1e3}, b in {-k*unit_time/0.001 : k in
// {.01,.02,.03,.04,.05,.1}}, c in {1e1,1e2,1e3} (a outermost), drops fits with
// a < 0, and keeps the lowest MSE (the first on ties). Throws
// std::invalid_argument naming the fix when nothing fits.
[[nodiscard]] ExponentialModel fit_exponential_model(const CandidateExecutionOptions& options);

}  // namespace zeus::lowtime
