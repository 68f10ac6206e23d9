// MINPACK's lmdif (Levenberg-Marquardt, forward-difference Jacobian, trust
// region scaled by the Jacobian's column norms), ported step for step so that
// a fit agrees with scipy.optimize.curve_fit (method "lm" calls MINPACK's
// lmdif with the same defaults). Derived from MINPACK: "This product includes
// software developed by the University of Chicago, as Operator of Argonne
// National Laboratory." (Moré, Garbow, Hillstrom, 1980; see docs/perseus.md).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace zeus::lowtime::detail {

struct LmdifOptions {
    double ftol = 1.49012e-08;  // scipy's leastsq defaults
    double xtol = 1.49012e-08;
    double gtol = 0.0;
    int maxfev = 50000;  // lowtime's curve_fit(maxfev=50000)
    double factor = 100.0;
};

struct LmdifResult {
    int info = 0;  // MINPACK's: 1-4 converged (scipy accepts these), 5 maxfev, 6-8 tolerances too small
    int nfev = 0;
    std::vector<double> fvec;  // residuals at x
    // The n x n upper triangle R of the final Jacobian's pivoted QR (J P = Q R)
    // and the pivot (0-based): what scipy's leastsq turns into cov_x.
    std::vector<double> r;  // column-major, n x n
    std::vector<std::size_t> pivot;
};

// residuals(x, out): writes m residuals for parameters x; returns false to abort.
using Residuals = std::function<bool(const std::vector<double>& x, std::vector<double>& out)>;

// Minimises the sum of squares of `m` residuals over x (updated in place).
LmdifResult lmdif(const Residuals& residuals, std::size_t m, std::vector<double>& x, const LmdifOptions& options = {});

}  // namespace zeus::lowtime::detail
