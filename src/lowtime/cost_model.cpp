#include "zeus/lowtime/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "minpack_lm.hpp"

namespace zeus::lowtime {

double ExponentialModel::cost(int quant_time) const {
    return coefficients_.a * std::exp(coefficients_.b * static_cast<double>(quant_time)) + coefficients_.c;
}

namespace {

struct Samples {
    std::vector<double> q;
    std::vector<double> y;
};

Samples samples_of(const CandidateExecutionOptions& options) {
    Samples s;
    for (const auto& o : options.options()) {
        s.q.push_back(static_cast<double>(o.quant_time()));
        s.y.push_back(o.cost);
    }
    return s;
}

double sum_squares(const Samples& s, const ExponentialCoefficients& k) {
    double total = 0.0;
    for (std::size_t i = 0; i < s.q.size(); ++i) {
        const double r = k.a * std::exp(k.b * s.q[i]) + k.c - s.y[i];
        total += r * r;
    }
    return total;
}

// curve_fit's covariance (method "lm"): leastsq inverts the final R
// (cov_x = R^-1 R^-T up to the pivot's permutation, which does not change
// which entries are infinite or NaN), curve_fit scales it by
// cost / (m - n). lowtime drops a fit whose pcov holds +inf; curve_fit turns
// a NaN anywhere into an all-inf pcov, and a singular R gives no cov_x.
bool covariance_finite(const detail::LmdifResult& fit, std::size_t m) {
    constexpr std::size_t n = 3;
    std::array<double, n * n> inv{};  // R^-1, upper triangular, column-major
    for (std::size_t j = 0; j < n; ++j)
        if (fit.r[j + j * n] == 0.0) return false;  // LAPACK trtri's info > 0
    for (std::size_t j = 0; j < n; ++j) {
        inv[j + j * n] = 1.0 / fit.r[j + j * n];
        for (std::size_t i = j; i-- > 0;) {
            double sum = 0.0;
            for (std::size_t k = i + 1; k <= j; ++k) sum += fit.r[i + k * n] * inv[k + j * n];
            inv[i + j * n] = -sum / fit.r[i + i * n];
        }
    }
    double cost = 0.0;
    for (double r : fit.fvec) cost += r * r;
    const double s_sq = cost / static_cast<double>(m - n);
    bool has_nan = false, has_inf = false;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (std::size_t k = std::max(i, j); k < n; ++k) sum += inv[i + k * n] * inv[j + k * n];
            has_nan |= std::isnan(sum) || std::isnan(sum * s_sq);
            has_inf |= sum * s_sq == std::numeric_limits<double>::infinity();
        }
    return !has_nan && !has_inf;
}

}  // namespace

std::optional<ExponentialCoefficients> fit_exponential_from(const CandidateExecutionOptions& options,
                                                            ExponentialCoefficients initial) {
    const Samples s = samples_of(options);
    if (s.q.size() <= 3) return std::nullopt;  // curve_fit: pcov all inf without a degree of freedom
    std::vector<double> x{initial.a, initial.b, initial.c};
    const auto residuals = [&](const std::vector<double>& p, std::vector<double>& out) {
        for (std::size_t i = 0; i < s.q.size(); ++i) out[i] = p[0] * std::exp(p[1] * s.q[i]) + p[2] - s.y[i];
        return true;
    };
    const auto fit = detail::lmdif(residuals, s.q.size(), x);
    // curve_fit raises for info 5-8 (lowtime's grid search would stop there);
    // this port drops that initial guess and tries the next.
    if (fit.info < 1 || fit.info > 4) return std::nullopt;
    if (!covariance_finite(fit, s.q.size())) return std::nullopt;
    return ExponentialCoefficients{x[0], x[1], x[2]};
}

double exponential_mse(const CandidateExecutionOptions& options, const ExponentialCoefficients& k) {
    const Samples s = samples_of(options);
    return sum_squares(s, k) / static_cast<double>(s.q.size());
}

ExponentialModel fit_exponential_model(const CandidateExecutionOptions& options) {
    const double unit_time = options.unit_time();
    std::optional<ExponentialCoefficients> best;
    double best_error = std::numeric_limits<double>::infinity();
    for (double a : {1e1, 1e2, 1e3}) {
        for (double k : {0.01, 0.02, 0.03, 0.04, 0.05, 0.1}) {
            const double b = -k * unit_time / 0.001;
            for (double c : {1e1, 1e2, 1e3}) {
                const auto fit = fit_exponential_from(options, {a, b, c});
                if (!fit || fit->a < 0.0) continue;
                const double error = exponential_mse(options, *fit);
                if (!std::isfinite(error)) continue;
                if (error < best_error) {
                    best_error = error;
                    best = fit;
                }
            }
        }
    }
    if (!best)
        throw std::invalid_argument(
            "no exponential cost model a*exp(b*t)+c with a >= 0 fits the " + std::to_string(options.options().size()) +
            " Pareto-optimal options from any of lowtime's 54 initial guesses (as lowtime would refuse them too): check "
            "that energy falls as time grows, or pass coefficients with --cost-models");
    return ExponentialModel(*best);
}

}  // namespace zeus::lowtime
