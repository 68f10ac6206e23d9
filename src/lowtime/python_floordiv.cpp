#include "zeus/lowtime/python_floordiv.hpp"

#include <cmath>
#include <stdexcept>

namespace zeus::lowtime {

double python_floordiv(double a, double b) {
    if (b == 0.0) throw std::domain_error("float floor division by zero");
    double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0) {
        // Python's remainder takes the divisor's sign.
        if ((b < 0.0) != (mod < 0.0)) div -= 1.0;
    }
    if (div != 0.0) {
        double floored = std::floor(div);
        if (div - floored > 0.5) floored += 1.0;
        return floored;
    }
    return std::copysign(0.0, a / b);
}

}  // namespace zeus::lowtime
