// Sampled window edges of GPUs (WindowEdges::Sampled) over fake GPUs
// (tests/support/fake_gpu.hpp): no driver call on the caller's thread, and
// GPU values computed when first read. Each fake draws a scripted 300 W
// whose energy counter refreshes every 20 ms, with the refresh time and the
// power in each snapshot as NVML's field values have them, so energy / time
// of every window must be that power.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "support/fake_gpu.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;
using Call = testing::FakeGpu::Call;

constexpr double kWatts = 300.0;

// `count` fakes drawing kWatts, their counters refreshing every 20 ms.
Gpus steady_gpus(unsigned count) {
    return testing::fake_gpus(count, [](testing::FakeGpu& gpu) {
        gpu.draw(Milliwatts(static_cast<std::int64_t>(kWatts * 1000)));
        gpu.refresh_every(20ms);
    });
}

// Driver reads (energy and power) of all of `gpus` made on this thread.
unsigned reads_on_this_thread(const Gpus& gpus) {
    unsigned reads = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        for (const Call call : {Call::TotalEnergy, Call::EnergySnapshot, Call::Power}) {
            reads += testing::fake(gpus, i).calls_on(std::this_thread::get_id(), call);
        }
    }
    return reads;
}

// Driver reads on the caller's thread for 50 windows of 8 GPUs, in each mode;
// `median_error_w`: of |energy / time − 300 W| over the windows (the median:
// a preemption between an edge's wall and steady clock reads skews one window).
unsigned caller_reads(WindowEdges edges, double& median_error_w) {
    Gpus gpus = steady_gpus(8);
    EnergyMonitorOptions options;
    options.edges = edges;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    (void)monitor->begin_window("warm-up", false);  // starts the watchers
    const unsigned before = reads_on_this_thread(gpus);
    std::vector<double> errors;
    for (int w = 0; w < 50; ++w) {
        EXPECT_TRUE(monitor->begin_window("w", false).ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(3 + w % 7));
        const Measurement m = monitor->end_window("w", false).value();
        for (const auto& [i, v] : m.gpu_energy) {
            // Steady power: energy / time is the power, to the edges' clock reads
            // and the counter's 1 mJ steps.
            errors.push_back(std::abs(v.energy.count() / m.time.count() - kWatts));
        }
    }
    monitor->stop_threads();
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    median_error_w = errors[errors.size() / 2];
    return reads_on_this_thread(gpus) - before;
}

TEST(SampledEdges, NeverCallTheDriverOnTheCallersThread) {
    double error_w = 0;
    EXPECT_EQ(caller_reads(WindowEdges::Sampled, error_w), 0U);
    EXPECT_LT(error_w, 1.0);  // W, over windows of 3–9 ms
    // The synchronous edges read each GPU at each edge: the count can fail.
    EXPECT_EQ(caller_reads(WindowEdges::Synchronous, error_w), 50U * 2 * 8);
}

// Sampled edges leave the GPU values to be computed when first read: the
// result must not depend on the monitor (gone by then), must equal what the
// window measured, and must be computed once for every copy and thread.
TEST(SampledEdges, ResultIsComputedOnFirstReadEvenAfterTheMonitorIsGone) {
    Gpus gpus = steady_gpus(4);
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    Measurement m;
    {
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
        ASSERT_TRUE(monitor->begin_window("w", false).ok());
        std::this_thread::sleep_for(150ms);
        m = monitor->end_window("w", false).value();
        EXPECT_TRUE(m.gpu_energy.pending());  // end_window computed no GPU value
    }
    const Measurement copy = m;
    std::vector<std::thread> readers;
    std::vector<double> totals(4);
    std::vector<std::size_t> sizes(4);
    for (std::size_t t = 0; t < totals.size(); ++t) {
        readers.emplace_back([&, t] {
            const Measurement& read = t % 2 == 0 ? m : copy;
            totals[t] = read.total_gpu_energy().count();  // the tally, racing the values' computation
            sizes[t] = read.gpu_energy.size();
        });
    }
    for (auto& r : readers) r.join();
    EXPECT_FALSE(m.gpu_energy.pending());
    for (std::size_t size : sizes) EXPECT_EQ(size, 4U);
    EXPECT_EQ(reads_on_this_thread(gpus), 0U);  // nor did reading them call the driver
    ASSERT_EQ(m.gpu_energy.size(), 4U);
    for (const auto& [i, v] : std::as_const(m).gpu_energy) {
        EXPECT_EQ(v.source, EnergySource::HardwareCounter);
        EXPECT_NEAR(v.energy.count() / m.time.count(), kWatts, 3.0) << "GPU " << i;
        EXPECT_EQ(&v, &copy.gpu_energy.at(i));  // copies share the values computed once
    }
    for (double total : totals) EXPECT_EQ(total, totals.front());
    double summed = 0.0;
    for (const auto& [i, v] : std::as_const(m).gpu_energy) summed += v.energy.count();
    EXPECT_EQ(totals.front(), summed);
    // A non-const access takes its own copy: changing it leaves the others alone.
    Measurement changed = copy;
    changed.gpu_energy.at(0).energy = Joules(-1.0);
    EXPECT_NE(m.gpu_energy.at(0).energy.count(), -1.0);
}

// end_window's warnings and total_energy come from the GPU values' tally,
// which must not build the values (so it costs the same for any number of
// GPUs) and must say what they say: the total of the GPUs that answered, the
// lost GPU with its first warning, and a GPU that measured exactly 0 J.
TEST(SampledEdges, TallyTellsWhatTheValuesSayWithoutBuildingThem) {
    Gpus gpus = testing::fake_gpus(4, [](testing::FakeGpu& gpu) {
        gpu.draw(Milliwatts(gpu.identity().index == 3 ? 0 : static_cast<std::int64_t>(kWatts * 1000)));
        gpu.refresh_every(20ms);
    });
    EnergyMonitorOptions options;
    options.edges = WindowEdges::Sampled;
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    ASSERT_TRUE(monitor->begin_window("w", false).ok());
    std::this_thread::sleep_for(150ms);
    testing::fake(gpus, 2).lose();
    std::this_thread::sleep_for(60ms);  // the watcher reads it (every 20 ms) and finds it lost
    const Measurement m = monitor->end_window("w", false).value();
    monitor->stop_threads();

    const auto tally = m.gpu_energy.tally();
    EXPECT_TRUE(m.gpu_energy.pending());
    EXPECT_EQ(m.total_gpu_energy().count(), tally.total.count());
    EXPECT_TRUE(m.gpu_energy.pending());
    // GPUs 0 and 1 drew kWatts all window; GPU 2 is lost, GPU 3 drew nothing.
    EXPECT_NEAR(tally.total.count(), 2 * kWatts * m.time.count(), 2 * 3.0 * m.time.count());
    EXPECT_TRUE(tally.measured_zero);
    ASSERT_EQ(tally.lost.size(), 1U);
    EXPECT_EQ(tally.lost.front().first, 2U);

    const auto& values = std::as_const(m).gpu_energy.map();
    const auto of_values = EnergyTally<unsigned>::of(values);
    EXPECT_EQ(tally.total.count(), of_values.total.count());
    EXPECT_EQ(tally.lost, of_values.lost);
    EXPECT_EQ(tally.measured_zero, of_values.measured_zero);
    ASSERT_TRUE(values.at(2).lost);
    EXPECT_EQ(tally.lost.front().second, values.at(2).warnings.front());
    EXPECT_NE(tally.lost.front().second.find("GPU 2 could not be read"), std::string::npos)
        << tally.lost.front().second;
    EXPECT_EQ(values.at(3).energy.count(), 0.0);
}

}  // namespace
}  // namespace zeus
