// EnergyValues, the per-device values of a Measurement: a plain map, or
// values computed once, when first read (what sampled edges hand out).
#include "zeus/monitor/measurement.hpp"

#include <gtest/gtest.h>

#include <map>

namespace zeus {
namespace {

TEST(EnergyValues, PlainMapsConvertAndBehaveAsBefore) {
    EnergyValues<unsigned> values =
        std::map<unsigned, EnergyValue>{{3, EnergyValue{Joules(2.0), EnergySource::HardwareCounter, {}}}};
    EXPECT_FALSE(values.pending());
    values[1] = EnergyValue{Joules(1.0), EnergySource::HardwareCounter, {}};
    const std::map<unsigned, EnergyValue>& as_map = values;
    EXPECT_EQ(as_map.size(), 2U);
    EXPECT_EQ(as_map.begin()->first, 1U);
    int computed = 0;
    auto deferred = EnergyValues<unsigned>::deferred([&computed] {
        ++computed;
        return std::map<unsigned, EnergyValue>{{7, EnergyValue{Joules(5.0), EnergySource::HardwareCounter, {}}}};
    });
    EXPECT_TRUE(deferred.pending());
    EXPECT_EQ(computed, 0);
    EXPECT_TRUE(deferred.contains(7));
    EXPECT_EQ(deferred.at(7).energy.count(), 5.0);
    EXPECT_EQ(deferred.size(), 1U);
    EXPECT_EQ(computed, 1);
}

}  // namespace
}  // namespace zeus
