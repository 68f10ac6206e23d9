// Floats written exactly as Python's repr() writes them, so that CSV logs
// (and the BSO server's and `zeus perseus solve`'s numbers) are
// byte-compatible with the original Zeus (and its replay tools).
#pragma once

#include <string>

namespace zeus {

// Shortest round-trip digits; fixed notation for exponents in [-4, 16),
// otherwise "d.ddde+XX"; integral values keep a ".0"; "inf", "nan".
[[nodiscard]] std::string python_float_repr(double value);

}  // namespace zeus
