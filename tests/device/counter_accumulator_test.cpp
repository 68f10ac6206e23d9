#include "zeus/device/counter_accumulator.hpp"
#include "zeus/device/counter_sampler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace zeus {
namespace {

using Clock = CounterAccumulator::Clock;
using namespace std::chrono_literals;

// A RAPL-like counter: µJ, wrapping at `range`, drawing `watts` steadily.
struct SteadyCounter {
    double watts;
    std::uint64_t range;
    Clock::time_point start = Clock::now();

    // True energy in µJ after `t`, and what the 32-bit-style register shows.
    [[nodiscard]] std::uint64_t true_counts(Clock::duration t) const {
        return static_cast<std::uint64_t>(watts * std::chrono::duration<double>(t).count() * 1e6);
    }
    [[nodiscard]] std::uint64_t raw(Clock::duration t) const { return true_counts(t) % range; }
};

CounterSpec rapl_like(std::uint64_t range, double max_watts) {
    return CounterSpec{"test counter", range, 1e-6, Watts(max_watts)};
}

class WrapsInOneWindow : public ::testing::TestWithParam<int> {};

TEST_P(WrapsInOneWindow, TotalIsExact) {
    const int wraps = GetParam();
    // 100 W into a 10 J register wraps every 100 ms; read every 40 ms (under
    // the 50 ms max_read_interval) for a window that spans `wraps` wraps.
    SteadyCounter counter{100.0, 10'000'000};
    CounterAccumulator acc(rapl_like(counter.range, 200.0));
    ASSERT_EQ(acc.max_read_interval(), std::chrono::duration_cast<Clock::duration>(25ms));
    const auto window = std::chrono::milliseconds(100 * wraps + 30);
    Clock::duration t = 0ms;
    EXPECT_EQ(acc.update(counter.raw(t), counter.start + t), CounterEvent::First);
    while (t < window) {
        t = std::min<Clock::duration>(t + 20ms, window);
        acc.update(counter.raw(t), counter.start + t);
    }
    EXPECT_EQ(acc.total_counts(), counter.true_counts(window) - counter.true_counts(0ms));
    EXPECT_EQ(acc.stats().wraps, static_cast<std::uint64_t>(wraps));
    EXPECT_TRUE(acc.stats().exact());
    EXPECT_DOUBLE_EQ(acc.total().count(), static_cast<double>(acc.total_counts()) * 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Counts, WrapsInOneWindow, ::testing::Values(1, 2, 5));

TEST(CounterAccumulator, BitsAboveTheRangeAreMasked) {
    CounterAccumulator acc(rapl_like(1000, 1e9));
    const auto t0 = Clock::now();
    acc.update(0xF0000000ULL * 1000 + 100, t0);  // high garbage bits, as reserved MSR bits may be
    acc.update(250, t0 + 1ms);
    EXPECT_EQ(acc.total_counts(), 150U);
}

TEST(CounterAccumulator, ResetIsFlaggedAndNeverNegative) {
    CounterAccumulator acc(rapl_like(1ULL << 32, 300.0));
    const auto t0 = Clock::now();
    acc.update(5'000'000'000ULL % (1ULL << 32), t0);
    acc.update(4'000'000'000ULL, t0 + 100ms);  // normal
    const auto before = acc.total_counts();
    // Driver reload: the counter restarts and has counted 1234 µJ since.
    EXPECT_EQ(acc.update(1234, t0 + 200ms), CounterEvent::Reset);
    EXPECT_EQ(acc.total_counts(), before + 1234);
    EXPECT_EQ(acc.stats().resets, 1U);
    EXPECT_FALSE(acc.stats().exact());
    acc.update(1234 + 500, t0 + 300ms);
    EXPECT_EQ(acc.total_counts(), before + 1234 + 500);
}

TEST(CounterAccumulator, LoneBackwardStepIsIgnored) {
    CounterAccumulator acc(rapl_like(1ULL << 32, 300.0));
    const auto t0 = Clock::now();
    acc.update(1'000'000'000, t0);
    acc.update(1'000'500'000, t0 + 10ms);
    EXPECT_EQ(acc.update(1'000'400'000, t0 + 20ms), CounterEvent::BackwardGlitch);
    EXPECT_EQ(acc.total_counts(), 500'000U);
    EXPECT_EQ(acc.update(1'001'000'000, t0 + 30ms), CounterEvent::Normal);
    EXPECT_EQ(acc.total_counts(), 1'000'000U);  // measured from the good baseline
    EXPECT_EQ(acc.stats().backward_glitches, 1U);
}

TEST(CounterAccumulator, RepeatedBackwardReadingsBecomeANewBaseline) {
    CounterAccumulator acc(rapl_like(1ULL << 32, 300.0));
    const auto t0 = Clock::now();
    acc.update(3'000'000'000, t0);
    EXPECT_EQ(acc.update(2'000'000'000, t0 + 10ms), CounterEvent::BackwardGlitch);
    EXPECT_EQ(acc.update(2'000'001'000, t0 + 20ms), CounterEvent::Reset);
    EXPECT_EQ(acc.update(2'000'002'000, t0 + 30ms), CounterEvent::Normal);
    EXPECT_EQ(acc.total_counts(), 1000U);  // only what followed the new baseline
}

TEST(CounterAccumulator, ImpossibleJumpIsIgnored) {
    CounterAccumulator acc(rapl_like(1ULL << 32, 300.0));
    const auto t0 = Clock::now();
    acc.update(1'000, t0);
    // 1 kJ in 10 ms would be 100 kW.
    EXPECT_EQ(acc.update(1'000'001'000, t0 + 10ms), CounterEvent::JumpGlitch);
    EXPECT_EQ(acc.total_counts(), 0U);
    acc.update(1'000'001'000 + 2'000'000, t0 + 20ms);  // 2 J in 10 ms = 200 W: fine
    EXPECT_EQ(acc.total_counts(), 2'000'000U);
    EXPECT_EQ(acc.stats().jump_glitches, 1U);
}

TEST(CounterAccumulator, ReadsTooFarApartAreFlagged) {
    SteadyCounter counter{10.0, 1'000'000};  // wraps every 100 ms at 10 W
    CounterAccumulator acc(rapl_like(counter.range, 20.0));  // max_read_interval 25 ms
    acc.update(counter.raw(0ms), counter.start);
    acc.update(counter.raw(40ms), counter.start + 40ms);
    EXPECT_EQ(acc.stats().late_reads, 0U);
    acc.update(counter.raw(140ms), counter.start + 140ms);  // 100 ms later: a wrap may hide
    EXPECT_EQ(acc.stats().late_reads, 1U);
    EXPECT_FALSE(acc.stats().exact());
}

TEST(CounterAccumulator, NonWrappingCounterNeedsNoBackgroundReads) {
    CounterAccumulator acc(CounterSpec{"nvml", 0, 1e-3, Watts(1000.0)});
    EXPECT_FALSE(acc.max_read_interval().has_value());
    const auto t0 = Clock::now();
    acc.update(10'000'000'000ULL, t0);
    acc.update(10'000'300'000ULL, t0 + 1000s);  // 300 J over 1000 s
    EXPECT_DOUBLE_EQ(acc.total().count(), 300.0);
}

TEST(CounterAccumulator, NonWrappingCounterDecreaseIsARestart) {
    CounterAccumulator acc(CounterSpec{"nvml", 0, 1e-3, Watts(0.0)});  // unbounded: no jump check
    const auto t0 = Clock::now();
    acc.update(50'000'000, t0);
    acc.update(90'000'000, t0 + 1ms);  // 40 kJ in 1 ms: accepted, there is no bound
    EXPECT_EQ(acc.total_counts(), 40'000'000U);
    EXPECT_EQ(acc.update(7'000, t0 + 2ms), CounterEvent::Reset);  // driver reload
    EXPECT_EQ(acc.total_counts(), 40'007'000U);
    EXPECT_EQ(acc.stats().resets, 1U);
    EXPECT_EQ(acc.stats().jump_glitches, 0U);
}

TEST(CounterSampler, BackgroundReadsKeepTotalsExactAcrossManyWraps) {
    // A counter that wraps every 400 ms at 50 W. At the 100 W bound it could
    // wrap every 200 ms, so the sampler reads it every 100 ms on its own.
    SteadyCounter counter{50.0, 20'000'000};
    std::atomic<std::uint64_t> last_true{0};
    auto shared = std::make_shared<AccumulatedCounter>(rapl_like(counter.range, 100.0), [&]() -> Result<std::uint64_t> {
        const auto t = Clock::now() - counter.start;
        last_true = counter.true_counts(t);
        return counter.raw(t);
    });
    {
        CounterSampler sampler({shared});
        const double wrap_at_max_s = static_cast<double>(counter.range) * 1e-6 / 100.0;
        EXPECT_EQ(sampler.period(), std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::duration<double>(wrap_at_max_s / 2)));
        const std::uint64_t first = last_true.load();
        std::this_thread::sleep_for(1300ms);  // 3+ wraps with no user read
        auto total = shared->read();
        ASSERT_TRUE(total.ok());
        EXPECT_EQ(shared->accumulator().total_counts(), last_true.load() - first);
        EXPECT_GE(shared->stats().wraps, 3U);
        EXPECT_EQ(shared->stats().late_reads, 0U) << "the sampler thread fell behind";
    }
    // The sampler is gone (thread joined); the counter still works on demand.
    EXPECT_TRUE(shared->read().ok());
}

TEST(CounterSampler, ReadErrorsSurfaceOnUserReads) {
    auto failing = std::make_shared<AccumulatedCounter>(rapl_like(1000, 1.0), []() -> Result<std::uint64_t> {
        return Error{ErrorCode::NoPermission, "energy_uj: permission denied", "run through zeusd", 0};
    });
    CounterSampler sampler({failing}, 5ms);
    auto r = failing->read();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::NoPermission);
}

}  // namespace
}  // namespace zeus
