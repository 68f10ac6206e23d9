// EnergyMonitor's windows as an API (names, nesting, threads, scoped
// windows, options, the sync hook) over fake GPUs: none of these depend on
// how energy is measured, only that it grows with time.
#include "zeus/monitor/energy_monitor.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "monitor/fake_gpus_fixture.hpp"
#include "support/fake_gpu.hpp"

namespace zeus {
namespace {

using namespace std::chrono_literals;

class EnergyMonitorFake : public testing::TwoFakeGpus {};

TEST_F(EnergyMonitorFake, NamesAreCheckedAndWindowsNest) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    ASSERT_TRUE(monitor->begin_window("outer").ok());
    auto dup = monitor->begin_window("outer");
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(dup.error().code, ErrorCode::InvalidState);
    EXPECT_NE(dup.error().message.find("'outer' already exists"), std::string::npos);
    EXPECT_TRUE(monitor->begin_window("outer", true, /*restart=*/true).ok());
    ASSERT_TRUE(monitor->begin_window("inner").ok());
    EXPECT_EQ(monitor->open_windows(), (std::vector<std::string>{"inner", "outer"}));
    auto missing = monitor->end_window("nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_NE(missing.error().hint.find("'inner', 'outer'"), std::string::npos) << missing.error().hint;
    std::this_thread::sleep_for(150ms);
    const Measurement inner = monitor->end_window("inner").value();
    std::this_thread::sleep_for(150ms);
    const Measurement outer = monitor->end_window("outer").value();
    EXPECT_GT(outer.time, inner.time);
    EXPECT_GT(outer.gpu_energy.at(0).energy, inner.gpu_energy.at(0).energy);
    const Measurement cancelled = [&] {
        EXPECT_TRUE(monitor->begin_window("c").ok());
        return monitor->end_window("c", true, /*cancel=*/true).value();
    }();
    EXPECT_EQ(cancelled.gpu_energy.at(0).energy.count(), 0.0);
    EXPECT_TRUE(monitor->begin_window("left").ok());
    EXPECT_EQ(monitor->reset_windows(), (std::vector<std::string>{"left"}));
    EXPECT_TRUE(monitor->open_windows().empty());
}

TEST_F(EnergyMonitorFake, WindowsBegunAndEndedFromOtherThreads) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int k = 0; k < 20; ++k) {
                const std::string name = "w" + std::to_string(t) + "-" + std::to_string(k);
                ASSERT_TRUE(monitor->begin_window(name).ok());
                ASSERT_TRUE(monitor->end_window(name).ok());
            }
        });
    }
    ASSERT_TRUE(monitor->begin_window("cross").ok());
    std::thread ender([&] { EXPECT_TRUE(monitor->end_window("cross").ok()); });
    ender.join();
    for (auto& th : threads) th.join();
    EXPECT_TRUE(monitor->open_windows().empty());
}

TEST_F(EnergyMonitorFake, ScopedWindowCancelsUnlessEnded) {
    Gpus gpus = open_gpus();
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr).value();
    {
        ScopedWindow w(*monitor, "scoped");
        ASSERT_TRUE(w.status().ok());
        EXPECT_EQ(monitor->open_windows().size(), 1U);
    }
    EXPECT_TRUE(monitor->open_windows().empty());
    ScopedWindow w(*monitor, "ended");
    EXPECT_TRUE(w.end().ok());
    EXPECT_FALSE(w.end().ok());
}

TEST_F(EnergyMonitorFake, BadOptionsAreClearErrors) {
    Gpus gpus = open_gpus();
    EnergyMonitorOptions bad_gpu;
    bad_gpu.gpu_indices = std::vector<unsigned>{0, 7};
    auto r = EnergyMonitor::open(gpus, nullptr, nullptr, bad_gpu);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("GPU 7 does not exist"), std::string::npos) << r.error().message;
    EnergyMonitorOptions bad_log;
    bad_log.log_file = "/proc/zeus-cannot-write-here/log.csv";
    auto l = EnergyMonitor::open(gpus, nullptr, nullptr, bad_log);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message.find("/proc/zeus-cannot-write-here"), std::string::npos) << l.error().message;
}

TEST_F(EnergyMonitorFake, SyncFunctionRunsAtBothEdges) {
    Gpus gpus = open_gpus();
    std::vector<std::vector<unsigned>> calls;
    EnergyMonitorOptions options;
    options.sync = [&](const std::vector<unsigned>& g) { calls.push_back(g); };
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
    ASSERT_TRUE(monitor->begin_window("s").ok());
    ASSERT_TRUE(monitor->end_window("s").ok());
    ASSERT_TRUE(monitor->begin_window("n", /*sync=*/false).ok());
    ASSERT_TRUE(monitor->end_window("n", false).ok());
    ASSERT_EQ(calls.size(), 2U);
    EXPECT_EQ(calls[0], (std::vector<unsigned>{0, 1}));
}

// A window whose average power is above the GPU's highest power limit (the
// fake's is 700 W) cannot be real (a wall-clock step under a simulator, a
// counter that jumped): the value says so, with either kind of edge. The
// other GPU, at 300 W, is not flagged.
TEST_F(EnergyMonitorFake, AveragePowerAboveTheHighestLimitIsWarnedAbout) {
    for (const WindowEdges edges : {WindowEdges::Synchronous, WindowEdges::Sampled}) {
        Gpus gpus = open_gpus();
        testing::fake(gpus, 0).draw(Milliwatts(5'000'000));
        EnergyMonitorOptions options;
        options.edges = edges;
        auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, options).value();
        ASSERT_TRUE(monitor->begin_window("w").ok());
        std::this_thread::sleep_for(300ms);
        const Measurement m = monitor->end_window("w").value();
        const auto flagged = [&](unsigned gpu) {
            for (const auto& w : m.gpu_energy.at(gpu).warnings) {
                if (w.find("above its highest power limit (700 W)") != std::string::npos) return true;
            }
            return false;
        };
        EXPECT_TRUE(flagged(0)) << static_cast<int>(edges);
        EXPECT_FALSE(flagged(1)) << static_cast<int>(edges);
    }
}

TEST(CudaSync, MissingRuntimeIsAnErrorNotACrash) {
    auto sync = cuda_sync();
    if (sync.ok()) GTEST_SKIP() << "this machine has a CUDA runtime";
    EXPECT_EQ(sync.error().code, ErrorCode::LibraryNotFound);
    EXPECT_FALSE(sync.error().hint.empty());
}

}  // namespace
}  // namespace zeus
