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

// A tally (total, lost values, zeros) read before the values: from the
// state's own tally when there is one, without computing the values;
// otherwise (and once they are computed) from the values themselves.
TEST(EnergyValues, TallyIsReadWithoutComputingTheValuesWhenItCanBe) {
    struct State {
        int* computed;
        int* tallied;
    };
    int computed = 0;
    int tallied = 0;
    using Map = std::map<unsigned, EnergyValue>;
    auto values_of = [](const State& s) {
        ++*s.computed;
        return Map{{1, EnergyValue{Joules(2.0), EnergySource::HardwareCounter, {}}},
                   {2, EnergyValue{Joules(0.0), EnergySource::HardwareCounter, {"lost", "more"}, true}},
                   {3, EnergyValue{Joules(0.5), EnergySource::HardwareCounter, {}}}};
    };
    auto tally_of = [](const State& s) {
        ++*s.tallied;
        return EnergyTally<unsigned>::of(
            Map{{1, EnergyValue{Joules(2.0), EnergySource::HardwareCounter, {}}},
                {2, EnergyValue{Joules(0.0), EnergySource::HardwareCounter, {"lost"}, true}},
                {3, EnergyValue{Joules(0.5), EnergySource::HardwareCounter, {}}}});
    };
    const auto values = EnergyValues<unsigned>::deferred(State{&computed, &tallied}, +values_of, +tally_of);
    const auto first = values.tally();
    const auto second = values.tally();
    EXPECT_EQ(computed, 0);
    EXPECT_EQ(tallied, 1);  // once, for every read
    EXPECT_TRUE(values.pending());
    EXPECT_EQ(first.total.count(), 2.5);  // the lost value is left out
    EXPECT_FALSE(first.measured_zero);
    ASSERT_EQ(first.lost.size(), 1U);
    EXPECT_EQ(first.lost.front(), (std::pair<unsigned, std::string>{2, "lost"}));
    EXPECT_EQ(second.lost, first.lost);
    EXPECT_EQ(values.size(), 3U);
    EXPECT_EQ(computed, 1);
    EXPECT_EQ(values.tally().total.count(), 2.5);  // now from the values
    EXPECT_EQ(tallied, 1);

    // Without a tally of its own, the tally computes the values.
    int plain_computed = 0;
    const auto plain = EnergyValues<unsigned>::deferred([&plain_computed] {
        ++plain_computed;
        return Map{{4, EnergyValue{Joules(0.0), EnergySource::HardwareCounter, {}}}};
    });
    const auto zero = plain.tally();
    EXPECT_EQ(plain_computed, 1);
    EXPECT_TRUE(zero.measured_zero);
    EXPECT_EQ(zero.total.count(), 0.0);
    EXPECT_TRUE(zero.lost.empty());
}

}  // namespace
}  // namespace zeus
