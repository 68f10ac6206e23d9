#include "zeus/platform/units.hpp"

#include <gtest/gtest.h>

#include <type_traits>

namespace zeus {
namespace {

// Lossy or cross-dimension conversions must not compile implicitly.
static_assert(!std::is_convertible_v<Joules, Millijoules>, "J (double) -> mJ (int) can lose precision");
static_assert(std::is_convertible_v<Millijoules, Joules>, "mJ -> J is exact in double");
static_assert(!std::is_convertible_v<Millijoules, Milliwatts>, "energy is not power");
static_assert(!std::is_convertible_v<Watts, Joules>, "power is not energy");
static_assert(!std::is_convertible_v<double, Joules>, "a bare number has no unit");
static_assert(std::is_convertible_v<Microjoules, Joules>);
static_assert(!std::is_convertible_v<Microjoules, Millijoules>, "uJ -> mJ truncates");
static_assert(std::is_convertible_v<Millijoules, Microjoules>, "mJ -> uJ is exact");

TEST(Units, ConvertsBetweenScales) {
    EXPECT_DOUBLE_EQ(Joules(Millijoules(1500)).count(), 1.5);
    EXPECT_EQ(Microjoules(Millijoules(7)).count(), 7000);
    EXPECT_EQ(quantity_cast<Millijoules>(Microjoules(2999)).count(), 2);  // explicit cast truncates
    EXPECT_DOUBLE_EQ(quantity_cast<Watts>(Milliwatts(250500)).count(), 250.5);
    EXPECT_EQ(quantity_cast<Milliwatts>(Watts(0.25)).count(), 250);
}

TEST(Units, PowerTimesTimeIsEnergy) {
    const Joules e = Watts(200.0) * std::chrono::milliseconds(1500);
    EXPECT_DOUBLE_EQ(e.count(), 300.0);
    const Watts p = Millijoules(3000) / std::chrono::seconds(2);
    EXPECT_DOUBLE_EQ(p.count(), 1.5);
}

TEST(Units, ArithmeticAndComparison) {
    using namespace zeus::literals;
    EXPECT_EQ((5_mJ + 7_mJ).count(), 12);
    EXPECT_EQ((12_mJ - 7_mJ).count(), 5);
    EXPECT_LT(100_mW, 200_mW);
    EXPECT_TRUE(same_value(Millijoules(1000), Joules(1.0)));
    EXPECT_FALSE(same_value(Millijoules(1001), Joules(1.0)));
}

TEST(Units, LargeCounterDifferencesStayExact) {
    // NVML's mJ counter is 64-bit; differences of large readings are exact integers.
    const Millijoules before((std::int64_t{1} << 60) + 12345);
    const Millijoules after((std::int64_t{1} << 60) + 99999);
    EXPECT_EQ((after - before).count(), 99999 - 12345);
}

}  // namespace
}  // namespace zeus
