#include "zeus/lowtime/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeus::lowtime {

double ExponentialModel::cost(int quant_time) const {
    return coefficients_.a * std::exp(coefficients_.b * static_cast<double>(quant_time)) + coefficients_.c;
}

namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<std::array<double, 3>, 3>;

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

double sum_squares(const Samples& s, const Vec3& p) {
    double total = 0.0;
    for (std::size_t i = 0; i < s.q.size(); ++i) {
        const double r = p[0] * std::exp(p[1] * s.q[i]) + p[2] - s.y[i];
        total += r * r;
    }
    return total;
}

// Solves (A) x = rhs for a symmetric positive definite 3x3 A (Cholesky).
bool solve_spd(Mat3 a, Vec3 rhs, Vec3& x) {
    Mat3 l{};
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j <= i; ++j) {
            double sum = a[i][j];
            for (int k = 0; k < j; ++k) sum -= l[i][k] * l[j][k];
            if (i == j) {
                if (!(sum > 0.0)) return false;
                l[i][i] = std::sqrt(sum);
            } else {
                l[i][j] = sum / l[j][j];
            }
        }
    }
    Vec3 z{};
    for (int i = 0; i < 3; ++i) {
        double sum = rhs[i];
        for (int k = 0; k < i; ++k) sum -= l[i][k] * z[k];
        z[i] = sum / l[i][i];
    }
    for (int i = 2; i >= 0; --i) {
        double sum = z[i];
        for (int k = i + 1; k < 3; ++k) sum -= l[k][i] * x[k];
        x[i] = sum / l[i][i];
    }
    return true;
}

// Singular values of the n x 3 Jacobian by one-sided Jacobi rotations, so
// the rank test below matches scipy's SVD-based one (curve_fit's pcov is
// infinite when a singular value is below eps * max(n, 3) * s_max).
bool jacobian_full_rank(const Samples& s, const Vec3& p) {
    const std::size_t n = s.q.size();
    std::vector<Vec3> cols(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double e = std::exp(p[1] * s.q[i]);
        cols[i] = {e, p[0] * s.q[i] * e, 1.0};
    }
    for (int sweep = 0; sweep < 60; ++sweep) {
        bool rotated = false;
        for (int j = 0; j < 2; ++j) {
            for (int k = j + 1; k < 3; ++k) {
                double alpha = 0.0, beta = 0.0, gamma = 0.0;
                for (const auto& row : cols) {
                    alpha += row[j] * row[j];
                    beta += row[k] * row[k];
                    gamma += row[j] * row[k];
                }
                if (std::abs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;
                rotated = true;
                const double zeta = (beta - alpha) / (2.0 * gamma);
                const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1.0 + zeta * zeta));
                const double c = 1.0 / std::sqrt(1.0 + t * t);
                const double sn = c * t;
                for (auto& row : cols) {
                    const double x = row[j];
                    const double y = row[k];
                    row[j] = c * x - sn * y;
                    row[k] = sn * x + c * y;
                }
            }
        }
        if (!rotated) break;
    }
    Vec3 sv{};
    for (int j = 0; j < 3; ++j) {
        double norm = 0.0;
        for (const auto& row : cols) norm += row[j] * row[j];
        sv[j] = std::sqrt(norm);
    }
    const double largest = *std::max_element(sv.begin(), sv.end());
    const double threshold = std::numeric_limits<double>::epsilon() * static_cast<double>(std::max<std::size_t>(n, 3)) * largest;
    return std::all_of(sv.begin(), sv.end(), [&](double v) { return v > threshold && std::isfinite(v); });
}

}  // namespace

std::optional<ExponentialCoefficients> fit_exponential_from(const CandidateExecutionOptions& options,
                                                            ExponentialCoefficients initial) {
    const Samples s = samples_of(options);
    if (s.q.size() <= 3) return std::nullopt;
    Vec3 p{initial.a, initial.b, initial.c};
    double current = sum_squares(s, p);
    if (!std::isfinite(current)) return std::nullopt;
    double lambda = 1e-3;
    constexpr int kMaxEvaluations = 50000;  // scipy's maxfev in lowtime
    constexpr double kTolerance = 1.49012e-08;  // MINPACK's default ftol/xtol in curve_fit
    for (int evaluations = 0; evaluations < kMaxEvaluations;) {
        Mat3 jtj{};
        Vec3 jtr{};
        for (std::size_t i = 0; i < s.q.size(); ++i) {
            const double e = std::exp(p[1] * s.q[i]);
            const Vec3 j{e, p[0] * s.q[i] * e, 1.0};
            const double r = p[0] * e + p[2] - s.y[i];
            for (int a = 0; a < 3; ++a) {
                jtr[a] += j[a] * r;
                for (int b = 0; b < 3; ++b) jtj[a][b] += j[a] * j[b];
            }
        }
        bool improved = false;
        while (evaluations < kMaxEvaluations) {
            Mat3 damped = jtj;
            for (int a = 0; a < 3; ++a) damped[a][a] += lambda * std::max(jtj[a][a], 1e-300);
            Vec3 step{};
            Vec3 rhs{-jtr[0], -jtr[1], -jtr[2]};
            if (!solve_spd(damped, rhs, step)) {
                lambda *= 10.0;
                if (lambda > 1e300) break;
                continue;
            }
            const Vec3 trial{p[0] + step[0], p[1] + step[1], p[2] + step[2]};
            const double next = sum_squares(s, trial);
            ++evaluations;
            if (std::isfinite(next) && next < current) {
                const double reduction = (current - next) / std::max(current, 1e-300);
                double step_norm = 0.0, p_norm = 0.0;
                for (int a = 0; a < 3; ++a) {
                    step_norm += step[a] * step[a];
                    p_norm += trial[a] * trial[a];
                }
                p = trial;
                current = next;
                lambda = std::max(lambda / 10.0, 1e-300);
                improved = true;
                if (reduction < kTolerance * kTolerance || std::sqrt(step_norm) < kTolerance * (std::sqrt(p_norm) + kTolerance))
                    evaluations = kMaxEvaluations;  // converged
                break;
            }
            lambda *= 10.0;
            if (lambda > 1e300) break;
        }
        if (!improved) break;
    }
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) return std::nullopt;
    if (!jacobian_full_rank(s, p)) return std::nullopt;
    return ExponentialCoefficients{p[0], p[1], p[2]};
}

double exponential_mse(const CandidateExecutionOptions& options, const ExponentialCoefficients& k) {
    const Samples s = samples_of(options);
    return sum_squares(s, {k.a, k.b, k.c}) / static_cast<double>(s.q.size());
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
        throw std::invalid_argument("no exponential cost model a*exp(b*t)+c fits the " +
                                    std::to_string(options.options().size()) +
                                    " Pareto-optimal options (at least 4 distinct quantized times are needed; "
                                    "profile more frequencies or use a finer unit time)");
    return ExponentialModel(*best);
}

}  // namespace zeus::lowtime
