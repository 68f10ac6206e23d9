// PowerMonitor over fake GPUs (tests/support/fake_gpu.hpp): bad options,
// failed reads counted and energy known only up to the last good read, each
// GPU answered on its own, and one sampling thread that stop() and the
// destructor join. Accuracy against ground truth: power_monitor_sim_test.cpp.
#include "zeus/monitor/power_monitor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "monitor/monitor_helpers.hpp"
#include "support/fake_gpu.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using testing::fake;
using testing::fake_gpus;
using testing::power_options;
using testing::thread_count;

class PowerMonitorFake : public ::testing::Test {
  protected:
    static std::unique_ptr<PowerMonitor> start(const Gpus& gpus, PowerMonitorOptions options = {}) {
        return testing::started(PowerMonitor::start(gpus, std::move(options)));
    }
};

TEST_F(PowerMonitorFake, Errors) {
    Gpus gpus = fake_gpus(2);  // no memory power, as an A100

    auto unknown = PowerMonitor::start(gpus, power_options(10ms, {}, {0, 2}));
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(unknown.error().message.find("0 to 1"), std::string::npos) << unknown.error().message;

    auto memory = PowerMonitor::start(gpus, power_options(10ms, {PowerDomain::MemoryAverage}));
    ASSERT_FALSE(memory.ok());
    EXPECT_EQ(memory.error().code, ErrorCode::NotSupported);
    EXPECT_NE(memory.error().message.find("memory_average"), std::string::npos) << memory.error().message;

    auto zero = PowerMonitor::start(gpus, power_options(0ns));
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().code, ErrorCode::InvalidArgument);

    // Domains default to what the GPUs support: no memory domain on A100.
    auto monitor = start(gpus, power_options(10ms, {}, {1}));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(monitor->domains(),
              (std::vector<PowerDomain>{PowerDomain::DeviceInstant, PowerDomain::DeviceAverage}));
    EXPECT_EQ(monitor->power_timeline(0).error().code, ErrorCode::NotFound);  // GPU 0 not monitored
    EXPECT_EQ(monitor->power_timeline(1, PowerDomain::MemoryAverage).error().code, ErrorCode::NotFound);
    EXPECT_EQ(monitor->power(std::nullopt, PowerDomain::MemoryAverage).error().code, ErrorCode::NotFound);
    const Timestamp now = MonitorClock::now();
    // Before the monitor started, in the future, and backwards.
    EXPECT_EQ(monitor->energy(now - 10s, now).error().code, ErrorCode::NoData);
    EXPECT_EQ(monitor->energy(now, now + 10s).error().code, ErrorCode::NoData);
    EXPECT_EQ(monitor->energy(now, now - 1ms).error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(monitor->power(now + 10s).error().code, ErrorCode::NoData);
}

TEST_F(PowerMonitorFake, FailedReadsAreCountedAndEndWhatIsKnown) {
    Gpus gpus = fake_gpus(1);
    auto monitor = start(gpus, power_options(10ms, {PowerDomain::DeviceInstant}));
    ASSERT_NE(monitor, nullptr);
    std::this_thread::sleep_for(50ms);
    const Timestamp before_loss = MonitorClock::now();
    fake(gpus, 0).lose();
    const Timestamp lost = MonitorClock::now();
    std::this_thread::sleep_for(150ms);  // well past 5 periods of failures
    const MonitorStats stats = monitor->stats();
    EXPECT_GT(stats.failed_reads, 5U);
    ASSERT_TRUE(stats.last_error.has_value());
    EXPECT_EQ(stats.last_error->code, ErrorCode::GpuLost) << stats.last_error->describe();
    // Known up to the last good read (at most one period and some scheduling
    // slack before the loss), not beyond.
    auto known = monitor->energy(before_loss - 40ms, before_loss - 25ms);
    EXPECT_TRUE(known.ok()) << known.error().describe();
    const auto after = monitor->energy(before_loss, MonitorClock::now());
    ASSERT_FALSE(after.ok());
    EXPECT_EQ(after.error().code, ErrorCode::NoData);
    // Reads resume when the GPU comes back (at another power, so that the
    // first read after it is stored: a steady value is stored once).
    fake(gpus, 0).draw(Milliwatts(250'000));
    fake(gpus, 0).recover();
    std::this_thread::sleep_for(50ms);
    const Timestamp back = MonitorClock::now();
    EXPECT_TRUE(monitor->energy(back - 1ms, back).ok());
    EXPECT_GT(monitor->power_timeline(0, PowerDomain::DeviceInstant, lost).value().size(), 0U);
}

// Energy per GPU: a lost GPU has its reason, the others their energy.
TEST_F(PowerMonitorFake, EnergyByGpuAnswersEachGpuOnItsOwn) {
    Gpus gpus = fake_gpus(2);
    auto monitor = start(gpus, power_options(10ms, {PowerDomain::DeviceInstant}));
    ASSERT_NE(monitor, nullptr);
    std::this_thread::sleep_for(50ms);
    const Timestamp begin = MonitorClock::now();
    fake(gpus, 1).lose();
    std::this_thread::sleep_for(150ms);  // well past 5 periods of failures
    const Timestamp end = MonitorClock::now();
    const auto by_gpu = monitor->energy_by_gpu(begin, end).value();
    ASSERT_EQ(by_gpu.size(), 2U);
    ASSERT_TRUE(by_gpu.at(0).ok()) << by_gpu.at(0).error().describe();
    EXPECT_GT(by_gpu.at(0)->count(), 0.0);
    ASSERT_FALSE(by_gpu.at(1).ok());
    EXPECT_EQ(by_gpu.at(1).error().code, ErrorCode::NoData);
    // energy(): all or the first GPU's reason.
    EXPECT_EQ(monitor->energy(begin, end).error().code, ErrorCode::NoData);
    EXPECT_EQ(monitor->energy_by_gpu(end, begin).error().code, ErrorCode::InvalidArgument);
    fake(gpus, 1).recover();
}

TEST_F(PowerMonitorFake, StopJoinsAndQueriesStillWork) {
    Gpus gpus = fake_gpus(1);
    const std::size_t threads = thread_count();
    auto monitor = start(gpus, power_options(10ms));
    ASSERT_NE(monitor, nullptr);
    EXPECT_EQ(thread_count(), threads + 1);  // one sampling thread, whatever the GPUs and domains
    const Timestamp begin = MonitorClock::now();
    std::this_thread::sleep_for(200ms);
    monitor->stop();
    const Timestamp stopped = MonitorClock::now();
    EXPECT_EQ(thread_count(), threads);
    const MonitorStats at_stop = monitor->stats();
    EXPECT_GT(at_stop.sweeps, 5U);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(monitor->stats().sweeps, at_stop.sweeps);  // no sampling after stop()
    monitor->stop();                                    // idempotent

    const auto timeline = monitor->power_timeline(0).value();
    EXPECT_FALSE(timeline.empty());
    auto energy = monitor->energy(begin, begin + 150ms);
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    EXPECT_GT(energy->at(0).count(), 0.0);
    EXPECT_TRUE(monitor->power(begin + 100ms).ok());
    EXPECT_TRUE(monitor->power().ok());
    // Nothing is known after the last read.
    EXPECT_EQ(monitor->energy(begin, stopped + 1s).error().code, ErrorCode::NoData);
}

TEST_F(PowerMonitorFake, DestructionJoins) {
    Gpus gpus = fake_gpus(1);
    const std::size_t threads = thread_count();
    {
        auto monitor = start(gpus, power_options(1ms));
        ASSERT_NE(monitor, nullptr);
        EXPECT_EQ(thread_count(), threads + 1);
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(thread_count(), threads);
}

// Every reading differs from the one before (a power that rises by 1 mW a
// read), so each is stored, and the five kept must be the five read last:
// the five highest values, whatever the load did to the sampling times.
TEST_F(PowerMonitorFake, BoundedStorageKeepsTheNewestSamples) {
    Gpus gpus = fake_gpus(1);
    constexpr int kScripted = 20000;
    std::vector<Result<PowerReading>> rising;
    for (int k = 0; k < kScripted; ++k) rising.emplace_back(PowerReading{Milliwatts(100'000 + k), std::nullopt});
    fake(gpus, 0).script_power(std::move(rising));
    auto monitor = start(gpus, power_options(2ms, {PowerDomain::DeviceInstant}, {}, 5));
    ASSERT_NE(monitor, nullptr);
    std::this_thread::sleep_for(100ms);
    monitor->stop();
    const unsigned read = fake(gpus, 0).calls(testing::FakeGpu::Call::Power);
    ASSERT_GT(read, 5U);
    ASSERT_LT(read, static_cast<unsigned>(kScripted));
    const auto timeline = monitor->power_timeline(0).value();
    ASSERT_EQ(timeline.size(), 5U);
    EXPECT_EQ(monitor->stats().stored_samples, 5U);
    for (std::size_t k = 0; k < timeline.size(); ++k) {
        const double expected_mw = 100'000 + (read - timeline.size()) + k;
        EXPECT_DOUBLE_EQ(timeline[k].power.count() * 1000.0, expected_mw) << "sample " << k << " of " << read;
    }
    // Energy before the oldest kept sample is not known any more.
    auto early = monitor->energy(timeline.front().time - 50ms, timeline.back().time);
    ASSERT_FALSE(early.ok());
    EXPECT_EQ(early.error().code, ErrorCode::NoData);
    EXPECT_NE(early.error().hint.find("max_samples_per_gpu"), std::string::npos) << early.error().hint;
    EXPECT_TRUE(monitor->energy(timeline.front().time, timeline.back().time).ok());
}

}  // namespace
}  // namespace zeus
