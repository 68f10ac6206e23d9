// Python float floor division, bit for bit. lowtime quantizes times with
// `int(real_time // unit_time)` and rounds flow capacities with
// `x // 1e-6 * 1e-6`; CPython's `//` is not floor(a / b) (0.011 // 0.001 is
// 10.0), so the same DAG and the same cuts need the same arithmetic.
#pragma once

namespace zeus::lowtime {

// CPython's float `//` (Objects/floatobject.c, _float_div_mod): the quotient
// of (a - fmod(a, b)) / b, sign-corrected and snapped to an integer.
// Throws std::domain_error for b == 0 (Python's ZeroDivisionError).
[[nodiscard]] double python_floordiv(double a, double b);

}  // namespace zeus::lowtime
