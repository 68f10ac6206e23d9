#include "minpack_lm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zeus::lowtime::detail {

namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();  // dpmpar(1)
constexpr double kDwarf = std::numeric_limits<double>::min();        // dpmpar(2)

// MINPACK's enorm: the Euclidean norm, with small and large components
// scaled so that nothing overflows (and rounding as MINPACK's).
double enorm(std::size_t n, const double* x) {
    constexpr double rdwarf = 3.834e-20, rgiant = 1.304e19;
    double s1 = 0, s2 = 0, s3 = 0, x1max = 0, x3max = 0;
    const double agiant = rgiant / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double xabs = std::fabs(x[i]);
        if (xabs >= agiant) {
            if (xabs > x1max) {
                const double d = x1max / xabs;
                s1 = 1 + s1 * (d * d);
                x1max = xabs;
            } else {
                const double d = xabs / x1max;
                s1 += d * d;
            }
        } else if (xabs <= rdwarf) {
            if (xabs > x3max) {
                const double d = x3max / xabs;
                s3 = 1 + s3 * (d * d);
                x3max = xabs;
            } else if (xabs != 0) {
                const double d = xabs / x3max;
                s3 += d * d;
            }
        } else {
            s2 += xabs * xabs;
        }
    }
    if (s1 != 0) return x1max * std::sqrt(s1 + (s2 / x1max) / x1max);
    if (s2 != 0) {
        if (s2 >= x3max) return std::sqrt(s2 * (1 + (x3max / s2) * (x3max * s3)));
        return std::sqrt(x3max * ((s2 / x3max) + (x3max * s3)));
    }
    return x3max * std::sqrt(s3);
}

double enorm(const std::vector<double>& x) { return enorm(x.size(), x.data()); }

// Column-major m x n matrix.
struct Matrix {
    std::size_t rows, cols;
    std::vector<double> v;
    Matrix(std::size_t m, std::size_t n) : rows(m), cols(n), v(m * n, 0.0) {}
    double& operator()(std::size_t i, std::size_t j) { return v[i + j * rows]; }
    double operator()(std::size_t i, std::size_t j) const { return v[i + j * rows]; }
    double* column(std::size_t j) { return &v[j * rows]; }
};

// MINPACK's qrfac with column pivoting (Householder).
void qrfac(Matrix& a, std::vector<std::size_t>& ipvt, std::vector<double>& rdiag, std::vector<double>& acnorm) {
    const std::size_t m = a.rows, n = a.cols;
    std::vector<double> wa(n);
    for (std::size_t j = 0; j < n; ++j) {
        acnorm[j] = enorm(m, a.column(j));
        rdiag[j] = acnorm[j];
        wa[j] = rdiag[j];
        ipvt[j] = j;
    }
    const std::size_t minmn = std::min(m, n);
    for (std::size_t j = 0; j < minmn; ++j) {
        std::size_t kmax = j;
        for (std::size_t k = j; k < n; ++k)
            if (rdiag[k] > rdiag[kmax]) kmax = k;
        if (kmax != j) {
            for (std::size_t i = 0; i < m; ++i) std::swap(a(i, j), a(i, kmax));
            rdiag[kmax] = rdiag[j];
            wa[kmax] = wa[j];
            std::swap(ipvt[j], ipvt[kmax]);
        }
        double ajnorm = enorm(m - j, &a(j, j));
        if (ajnorm != 0) {
            if (a(j, j) < 0) ajnorm = -ajnorm;
            for (std::size_t i = j; i < m; ++i) a(i, j) /= ajnorm;
            a(j, j) += 1;
            for (std::size_t k = j + 1; k < n; ++k) {
                double sum = 0;
                for (std::size_t i = j; i < m; ++i) sum += a(i, j) * a(i, k);
                const double temp = sum / a(j, j);
                for (std::size_t i = j; i < m; ++i) a(i, k) -= temp * a(i, j);
                if (rdiag[k] != 0) {
                    const double t = a(j, k) / rdiag[k];
                    rdiag[k] *= std::sqrt(std::max(0.0, 1 - t * t));
                    const double d = rdiag[k] / wa[k];
                    if (0.05 * (d * d) <= kEpsilon) {
                        rdiag[k] = enorm(m - (j + 1), &a(j + 1, k));
                        wa[k] = rdiag[k];
                    }
                }
            }
        }
        rdiag[j] = -ajnorm;
    }
}

// MINPACK's qrsolv: solves A x = b, D x = 0 in the least-squares sense given
// the QR of A (r: n x n in the leading rows of `r`, whose strict lower
// triangle it overwrites with the factor S of R^T R + D^2).
void qrsolv(Matrix& r, const std::vector<std::size_t>& ipvt, const std::vector<double>& diag, const std::vector<double>& qtb,
            std::vector<double>& x, std::vector<double>& sdiag) {
    const std::size_t n = r.cols;
    std::vector<double> wa(n);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t i = j; i < n; ++i) r(i, j) = r(j, i);
        x[j] = r(j, j);
        wa[j] = qtb[j];
    }
    for (std::size_t j = 0; j < n; ++j) {
        const std::size_t l = ipvt[j];
        if (diag[l] != 0) {
            for (std::size_t k = j; k < n; ++k) sdiag[k] = 0;
            sdiag[j] = diag[l];
            double qtbpj = 0;
            for (std::size_t k = j; k < n; ++k) {
                if (sdiag[k] == 0) continue;
                double sin, cos;
                if (std::fabs(r(k, k)) < std::fabs(sdiag[k])) {
                    const double cotan = r(k, k) / sdiag[k];
                    sin = 0.5 / std::sqrt(0.25 + 0.25 * (cotan * cotan));
                    cos = sin * cotan;
                } else {
                    const double tan = sdiag[k] / r(k, k);
                    cos = 0.5 / std::sqrt(0.25 + 0.25 * (tan * tan));
                    sin = cos * tan;
                }
                const double temp = cos * wa[k] + sin * qtbpj;
                qtbpj = -sin * wa[k] + cos * qtbpj;
                wa[k] = temp;
                r(k, k) = cos * r(k, k) + sin * sdiag[k];
                for (std::size_t i = k + 1; i < n; ++i) {
                    const double t = cos * r(i, k) + sin * sdiag[i];
                    sdiag[i] = -sin * r(i, k) + cos * sdiag[i];
                    r(i, k) = t;
                }
            }
        }
        sdiag[j] = r(j, j);
        r(j, j) = x[j];
    }
    std::size_t nsing = n;
    for (std::size_t j = 0; j < n; ++j) {
        if (sdiag[j] == 0 && nsing == n) nsing = j;
        if (nsing < n) wa[j] = 0;
    }
    for (std::size_t k = 1; k <= nsing; ++k) {
        const std::size_t j = nsing - k;
        double sum = 0;
        for (std::size_t i = j + 1; i < nsing; ++i) sum += r(i, j) * wa[i];
        wa[j] = (wa[j] - sum) / sdiag[j];
    }
    for (std::size_t j = 0; j < n; ++j) x[ipvt[j]] = wa[j];
}

// MINPACK's lmpar: the Levenberg-Marquardt parameter for trust radius delta.
void lmpar(Matrix& r, const std::vector<std::size_t>& ipvt, const std::vector<double>& diag, const std::vector<double>& qtb,
           double delta, double& par, std::vector<double>& x, std::vector<double>& sdiag) {
    const std::size_t n = r.cols;
    std::vector<double> wa1(n), wa2(n);
    std::size_t nsing = n;
    for (std::size_t j = 0; j < n; ++j) {
        wa1[j] = qtb[j];
        if (r(j, j) == 0 && nsing == n) nsing = j;
        if (nsing < n) wa1[j] = 0;
    }
    for (std::size_t k = 1; k <= nsing; ++k) {
        const std::size_t j = nsing - k;
        wa1[j] /= r(j, j);
        const double temp = wa1[j];
        for (std::size_t i = 0; i < j; ++i) wa1[i] -= r(i, j) * temp;
    }
    for (std::size_t j = 0; j < n; ++j) x[ipvt[j]] = wa1[j];
    int iter = 0;
    for (std::size_t j = 0; j < n; ++j) wa2[j] = diag[j] * x[j];
    double dxnorm = enorm(wa2);
    double fp = dxnorm - delta;
    if (fp <= 0.1 * delta) {
        par = 0;
        return;
    }
    double parl = 0;
    if (nsing >= n) {
        for (std::size_t j = 0; j < n; ++j) {
            const std::size_t l = ipvt[j];
            wa1[j] = diag[l] * (wa2[l] / dxnorm);
        }
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::size_t i = 0; i < j; ++i) sum += r(i, j) * wa1[i];
            wa1[j] = (wa1[j] - sum) / r(j, j);
        }
        const double temp = enorm(wa1);
        parl = fp / delta / temp / temp;
    }
    for (std::size_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::size_t i = 0; i <= j; ++i) sum += r(i, j) * qtb[i];
        wa1[j] = sum / diag[ipvt[j]];
    }
    const double gnorm = enorm(wa1);
    double paru = gnorm / delta;
    if (paru == 0) paru = kDwarf / std::min(delta, 0.1);
    par = std::max(par, parl);
    par = std::min(par, paru);
    if (par == 0) par = gnorm / dxnorm;
    for (;;) {
        ++iter;
        if (par == 0) par = std::max(kDwarf, 0.001 * paru);
        const double s = std::sqrt(par);
        for (std::size_t j = 0; j < n; ++j) wa1[j] = s * diag[j];
        qrsolv(r, ipvt, wa1, qtb, x, sdiag);
        for (std::size_t j = 0; j < n; ++j) wa2[j] = diag[j] * x[j];
        dxnorm = enorm(wa2);
        const double previous = fp;
        fp = dxnorm - delta;
        if (std::fabs(fp) <= 0.1 * delta || (parl == 0 && fp <= previous && previous < 0) || iter == 10) break;
        if (dxnorm == 0) break;
        for (std::size_t j = 0; j < n; ++j) {
            const std::size_t l = ipvt[j];
            wa1[j] = diag[l] * (wa2[l] / dxnorm);
        }
        for (std::size_t j = 0; j < n; ++j) {
            wa1[j] /= sdiag[j];
            const double temp = wa1[j];
            for (std::size_t i = j + 1; i < n; ++i) wa1[i] -= r(i, j) * temp;
        }
        const double temp = enorm(wa1);
        const double parc = fp / delta / temp / temp;
        if (fp > 0) parl = std::max(parl, par);
        if (fp < 0) paru = std::min(paru, par);
        par = std::max(parl, par + parc);
    }
    if (iter == 0) par = 0;
}

}  // namespace

// One function, as MINPACK's lmdif is: its outer and inner iterations share a
// dozen variables, and keeping them side by side with the Fortran is how this
// is checked (issue 25 left it whole on purpose).
LmdifResult lmdif(const Residuals& residuals, std::size_t m, std::vector<double>& x, const LmdifOptions& o) {
    const std::size_t n = x.size();
    LmdifResult result;
    if (n == 0 || m < n || o.ftol < 0 || o.xtol < 0 || o.gtol < 0 || o.maxfev <= 0 || o.factor <= 0) return result;
    std::vector<double> fvec(m), wa4(m), wa1(n), wa2(n), wa3(n), diag(n), qtf(n);
    std::vector<std::size_t> ipvt(n);
    Matrix fjac(m, n);
    if (!residuals(x, fvec)) return result;
    result.nfev = 1;
    double fnorm = enorm(fvec);
    double par = 0, delta = 0, xnorm = 0;
    int iter = 1;
    int info = 0;
    const double eps = std::sqrt(kEpsilon);  // fdjac2 with epsfcn = 0
    auto finish = [&] {
        result.info = info;
        result.fvec = fvec;
        result.r.assign(n * n, 0.0);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t i = 0; i <= j; ++i) result.r[i + j * n] = fjac(i, j);
        result.pivot = ipvt;
        return result;
    };
    for (;;) {
        // fdjac2: forward differences.
        for (std::size_t j = 0; j < n; ++j) {
            const double temp = x[j];
            double h = eps * std::fabs(temp);
            if (h == 0) h = eps;
            x[j] = temp + h;
            if (!residuals(x, wa4)) return result;
            x[j] = temp;
            for (std::size_t i = 0; i < m; ++i) fjac(i, j) = (wa4[i] - fvec[i]) / h;
        }
        result.nfev += static_cast<int>(n);
        qrfac(fjac, ipvt, wa1, wa2);
        if (iter == 1) {
            for (std::size_t j = 0; j < n; ++j) diag[j] = wa2[j] == 0 ? 1.0 : wa2[j];
            for (std::size_t j = 0; j < n; ++j) wa3[j] = diag[j] * x[j];
            xnorm = enorm(wa3);
            delta = o.factor * xnorm;
            if (delta == 0) delta = o.factor;
        }
        // Q^T fvec into qtf; R's diagonal back in fjac.
        wa4 = fvec;
        for (std::size_t j = 0; j < n; ++j) {
            if (fjac(j, j) != 0) {
                double sum = 0;
                for (std::size_t i = j; i < m; ++i) sum += fjac(i, j) * wa4[i];
                const double temp = -sum / fjac(j, j);
                for (std::size_t i = j; i < m; ++i) wa4[i] += fjac(i, j) * temp;
            }
            fjac(j, j) = wa1[j];
            qtf[j] = wa4[j];
        }
        double gnorm = 0;
        if (fnorm != 0) {
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t l = ipvt[j];
                if (wa2[l] != 0) {
                    double sum = 0;
                    for (std::size_t i = 0; i <= j; ++i) sum += fjac(i, j) * (qtf[i] / fnorm);
                    gnorm = std::max(gnorm, std::fabs(sum / wa2[l]));
                }
            }
        }
        if (gnorm <= o.gtol) info = 4;
        if (info != 0) return finish();
        for (std::size_t j = 0; j < n; ++j) diag[j] = std::max(diag[j], wa2[j]);
        double ratio = 0;
        do {
            // lmpar works on (a copy of) R, the leading n x n block of fjac.
            Matrix r(n, n);
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t i = 0; i < n; ++i) r(i, j) = fjac(i, j);
            std::vector<double> step(n), sdiag(n);
            lmpar(r, ipvt, diag, qtf, delta, par, step, sdiag);
            for (std::size_t j = 0; j < n; ++j) {
                wa1[j] = -step[j];
                wa2[j] = x[j] + wa1[j];
                wa3[j] = diag[j] * wa1[j];
            }
            const double pnorm = enorm(wa3);
            if (iter == 1) delta = std::min(delta, pnorm);
            if (!residuals(wa2, wa4)) return result;
            ++result.nfev;
            const double fnorm1 = enorm(wa4);
            double actred = -1;
            if (0.1 * fnorm1 < fnorm) {
                const double d = fnorm1 / fnorm;
                actred = 1 - d * d;
            }
            for (std::size_t j = 0; j < n; ++j) {
                wa3[j] = 0;
                const double temp = wa1[ipvt[j]];
                for (std::size_t i = 0; i <= j; ++i) wa3[i] += fjac(i, j) * temp;
            }
            const double temp1 = enorm(wa3) / fnorm;
            const double temp2 = (std::sqrt(par) * pnorm) / fnorm;
            const double prered = temp1 * temp1 + temp2 * temp2 / 0.5;
            const double dirder = -(temp1 * temp1 + temp2 * temp2);
            ratio = prered != 0 ? actred / prered : 0;
            if (ratio <= 0.25) {
                double temp = actred >= 0 ? 0.5 : 0.5 * dirder / (dirder + 0.5 * actred);
                if (0.1 * fnorm1 >= fnorm || temp < 0.1) temp = 0.1;
                delta = temp * std::min(delta, pnorm / 0.1);
                par /= temp;
            } else if (par == 0 || ratio >= 0.75) {
                delta = pnorm / 0.5;
                par = 0.5 * par;
            }
            if (ratio >= 1e-4) {
                for (std::size_t j = 0; j < n; ++j) {
                    x[j] = wa2[j];
                    wa2[j] = diag[j] * x[j];
                }
                fvec = wa4;
                xnorm = enorm(wa2);
                fnorm = fnorm1;
                ++iter;
            }
            if (std::fabs(actred) <= o.ftol && prered <= o.ftol && 0.5 * ratio <= 1) info = 1;
            if (delta <= o.xtol * xnorm) info = 2;
            if (std::fabs(actred) <= o.ftol && prered <= o.ftol && 0.5 * ratio <= 1 && info == 2) info = 3;
            if (info != 0) return finish();
            if (result.nfev >= o.maxfev) info = 5;
            if (std::fabs(actred) <= kEpsilon && prered <= kEpsilon && 0.5 * ratio <= 1) info = 6;
            if (delta <= kEpsilon * xnorm) info = 7;
            if (gnorm <= kEpsilon) info = 8;
            if (info != 0) return finish();
        } while (ratio < 1e-4);
    }
}

}  // namespace zeus::lowtime::detail
