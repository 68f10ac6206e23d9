#include "zeus/platform/python_float.hpp"

#include <gtest/gtest.h>

namespace zeus {
namespace {

// Python's repr(float) for each value, per the language's documented rules:
// shortest round-trip digits; fixed notation when 1e-4 <= |x| < 1e16.
TEST(PythonFloatRepr, MatchesPythonRepr) {
    EXPECT_EQ(python_float_repr(0.0), "0.0");
    EXPECT_EQ(python_float_repr(-0.0), "-0.0");
    EXPECT_EQ(python_float_repr(1.0), "1.0");
    EXPECT_EQ(python_float_repr(100.0), "100.0");
    EXPECT_EQ(python_float_repr(0.1), "0.1");
    EXPECT_EQ(python_float_repr(1.5), "1.5");
    EXPECT_EQ(python_float_repr(-2.25), "-2.25");
    EXPECT_EQ(python_float_repr(0.0001), "0.0001");
    EXPECT_EQ(python_float_repr(0.00001), "1e-05");
    EXPECT_EQ(python_float_repr(1e16), "1e+16");
    EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
    EXPECT_EQ(python_float_repr(123456789012345678.0), "1.2345678901234568e+17");
    EXPECT_EQ(python_float_repr(1700000000.123456), "1700000000.123456");
    EXPECT_EQ(python_float_repr(2.5e-7), "2.5e-07");
    EXPECT_EQ(python_float_repr(1.0 / 3.0), "0.3333333333333333");
    EXPECT_EQ(python_float_repr(1e100), "1e+100");
}

}  // namespace
}  // namespace zeus
