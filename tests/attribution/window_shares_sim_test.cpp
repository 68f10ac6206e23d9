// A window's share of each GPU's energy (WindowShares beside an EnergyMonitor)
// over the real NVML backend and the simulator's processes, against their
// ground truth. As in attribution_sim_test.cpp the GPU has no leakage and its
// idle power is known, so a process's truth is its dynamic energy exactly.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zeus_sim/zeus_sim.h>

#include <fstream>
#include <thread>

#include "support/sim_fixture.hpp"
#include "zeus/attribution/window_shares.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::attribution {
namespace {

constexpr double kIdleW = 50, kMaxDynamicW = 300;
constexpr const char* kConfig = R"({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB",
    "power": {"idle_w": 50, "max_dynamic_w": 300, "leakage_w_per_c": 0, "clock_exponent": 2.5},
    "thermal": {"throttle_c": 300}, "counters": {"power_noise_w": 0}}]})";
// The driver's utilization sample period in the simulator (sim/src/processes.h).
constexpr double kSamplePeriodS = 1.0 / 6.0;

const std::uint32_t kSelf = static_cast<std::uint32_t>(::getpid());
constexpr std::uint32_t kOther = 4'000'001;  // beyond pid_max: never a real process

class WindowSharesSimTest : public zeus::testing::SimulatedGpus {
  protected:
    void SetUp() override {
        SimulatedGpus::SetUp();
        configure(kConfig);
        gpus_ = Gpus::open(simulated());
        ASSERT_EQ(gpus_.size(), 1U);
        monitor_ = EnergyMonitor::open(gpus_, nullptr, nullptr, {}).value();
    }
    std::unique_ptr<WindowShares> shares(WindowSharesOptions options) {
        return WindowShares::open(gpus_, monitor_->gpu_indices(), std::move(options)).value();
    }
    static WindowSharesOptions idle_known(ShareTarget target = ShareTarget::this_process()) {
        WindowSharesOptions options;
        options.target = std::move(target);
        options.idle_power = {{0U, Milliwatts(50'000)}};
        return options;
    }
    static int begin_load(double utilization, std::uint32_t pid) {
        int id = -1;
        EXPECT_EQ(zeusSimProcessLoadBegin(0, utilization, static_cast<int>(pid), 1.0, &id), ZEUS_SIM_OK)
            << zeusSimLastError();
        return id;
    }
    static double process_truth(std::uint32_t pid) {
        double j = 0;
        EXPECT_EQ(zeusSimProcessEnergy(0, static_cast<int>(pid), &j), ZEUS_SIM_OK) << zeusSimLastError();
        return j;
    }
    // One window of `seconds` around `work` (which may move the clock too).
    template <class Work>
    std::pair<Measurement, WindowShare> window(WindowShares& shares, double seconds, Work&& work) {
        EXPECT_TRUE(monitor_->begin_window("w").ok());
        shares.begin("w");
        work();
        advance(seconds);
        Measurement m = monitor_->end_window("w").value();
        auto split = shares.end("w", m).value();
        return {m, split.at(0)};
    }
    static void expect_conserved(const Measurement& m, const WindowShare& share) {
        EXPECT_EQ(share.share_mj + share.others_mj() + share.remainder.energy_mj(), share.gpu_mj);
        EXPECT_NEAR(static_cast<double>(share.gpu_mj) / 1000.0, m.gpu_energy.at(0).energy.count(), 0.0005);
    }

    Gpus gpus_;
    std::unique_ptr<EnergyMonitor> monitor_;
};

TEST_F(WindowSharesSimTest, AProcessAloneOnTheGpuGetsItsTrueEnergyLabelledExclusive) {
    auto tracker = shares(idle_known());
    const int load = begin_load(0.7, kSelf);
    advance(1);
    const double before = process_truth(kSelf);
    auto [m, share] = window(*tracker, 8, [] {});
    const double truth = process_truth(kSelf) - before;
    EXPECT_NEAR(truth, kMaxDynamicW * 0.7 * 8, 1e-6);
    ASSERT_TRUE(share.method.has_value());
    EXPECT_EQ(*share.method, Method::Exclusive);
    EXPECT_EQ(share.pids, std::vector<std::uint32_t>{kSelf});
    // Exclusive: the window's energy less the idle estimate, exactly.
    EXPECT_EQ(share.share_mj, share.gpu_mj - std::llround(kIdleW * 1000 * m.time.count()));
    EXPECT_EQ(share.remainder.idle_mj, std::llround(kIdleW * 1000 * m.time.count()));
    // The counter's edges: 1 mJ each, and no edge estimate on the virtual clock.
    EXPECT_NEAR(static_cast<double>(share.share_mj) / 1000.0, truth, 0.002);
    expect_conserved(m, share);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(WindowSharesSimTest, WithoutAnIdlePowerTheWholeWindowIsTheExclusiveShare) {
    auto tracker = shares({});
    const int load = begin_load(0.4, kSelf);
    auto [m, share] = window(*tracker, 3, [] {});
    EXPECT_EQ(share.share_mj, share.gpu_mj);
    EXPECT_EQ(share.method, Method::Exclusive);
    EXPECT_FALSE(share.idle_power.has_value());
    expect_conserved(m, share);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

// This process at 60 % and another at 30 % for part of the window: the share
// is within the documented bound of the truth (the active energy of one
// sample period at each edge, plus the samples' whole-percent steps).
class SharedGpu : public WindowSharesSimTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(SharedGpu, TheShareFollowsTheTruthAndTheRemainderKeepsTheRest) {
    ASSERT_EQ(zeusSimSetSharing(0, GetParam()), ZEUS_SIM_OK) << zeusSimLastError();
    auto tracker = shares(idle_known());
    const int mine = begin_load(0.6, kSelf);
    advance(1.05);  // the edges and the other process's start fall inside sample periods
    const double mine_before = process_truth(kSelf);
    int other = -1;
    auto [m, share] = window(*tracker, 2, [&] {
        advance(0.4);
        other = begin_load(0.3, kOther);
        advance(10);
        ASSERT_EQ(zeusSimLoadEnd(other), ZEUS_SIM_OK);
    });
    const double truth = process_truth(kSelf) - mine_before;
    const double other_truth = process_truth(kOther);
    ASSERT_EQ(share.method, Method::Utilization);
    EXPECT_EQ(share.pids, std::vector<std::uint32_t>{kSelf});
    ASSERT_EQ(share.processes.size(), 2U);
    const double bound = 2 * kSamplePeriodS * kMaxDynamicW * 0.9 + 0.01 * truth;
    EXPECT_NEAR(static_cast<double>(share.share_mj) / 1000.0, truth, bound);

    EXPECT_NEAR(static_cast<double>(share.others_mj()) / 1000.0, other_truth, bound);
    expect_conserved(m, share);
    ASSERT_EQ(zeusSimLoadEnd(mine), ZEUS_SIM_OK);
}

INSTANTIATE_TEST_SUITE_P(Sharing, SharedGpu, ::testing::Values("concurrent", "time_sliced"));

TEST_F(WindowSharesSimTest, ATargetNotOnTheGpuGetsNothingAndSaysWhy) {
    auto tracker = shares(idle_known());
    const int other = begin_load(0.5, kOther);
    auto [m, share] = window(*tracker, 3, [] {});
    EXPECT_EQ(share.share_mj, 0);
    EXPECT_FALSE(share.method.has_value());
    EXPECT_TRUE(share.pids.empty());
    EXPECT_EQ(share.others_mj() + share.remainder.energy_mj(), share.gpu_mj);
    ASSERT_EQ(share.warnings.size(), 1U);
    EXPECT_NE(share.warnings.front().find("host's PID namespace"), std::string::npos) << share.warnings.front();
    ASSERT_EQ(zeusSimLoadEnd(other), ZEUS_SIM_OK);
}

// A process tree under a fake /proc: 500 is the root, 501 its child, 502 its
// grandchild; 600 is not below it.
TEST_F(WindowSharesSimTest, AProcessTreeCountsItsDescendants) {
    const auto proc = dir_ / "proc";
    for (auto [pid, parent] : {std::pair{500, 1}, {501, 500}, {502, 501}, {600, 1}}) {
        std::filesystem::create_directories(proc / std::to_string(pid));
        // A command with a space and a ')' in it, as the kernel writes it.
        std::ofstream(proc / std::to_string(pid) / "stat") << pid << " (py) thon) S " << parent << " 1 1 0\n";
    }
    WindowSharesOptions options = idle_known(ShareTarget{ShareTarget::Kind::ProcessTree, {500}});
    options.proc_root = proc;
    auto tracker = shares(options);
    std::vector<int> loads;
    for (std::uint32_t pid : {501U, 502U, 600U}) loads.push_back(begin_load(0.2, pid));
    auto [m, share] = window(*tracker, 4, [] {});
    EXPECT_EQ(share.pids, (std::vector<std::uint32_t>{501, 502}));
    EXPECT_EQ(share.method, Method::Utilization);
    std::int64_t expected = 0;
    for (const Share& s : share.processes) {
        if (s.pid != 600) expected += s.energy_mj();
    }
    EXPECT_EQ(share.share_mj, expected);
    expect_conserved(m, share);
    for (int load : loads) ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

TEST_F(WindowSharesSimTest, OverlappingWindowsEachGetTheirOwnSamples) {
    auto tracker = shares(idle_known());
    const int mine = begin_load(0.5, kSelf);
    ASSERT_TRUE(monitor_->begin_window("outer").ok());
    tracker->begin("outer");
    advance(3);
    const int other = begin_load(0.5, kOther);  // only in the inner window
    ASSERT_TRUE(monitor_->begin_window("inner").ok());
    tracker->begin("inner");
    advance(3);
    Measurement inner_m = monitor_->end_window("inner").value();
    WindowShare inner = tracker->end("inner", inner_m).value().at(0);
    ASSERT_EQ(zeusSimLoadEnd(other), ZEUS_SIM_OK);
    advance(3);
    Measurement outer_m = monitor_->end_window("outer").value();
    WindowShare outer = tracker->end("outer", outer_m).value().at(0);
    EXPECT_EQ(inner.method, Method::Utilization);
    EXPECT_EQ(outer.method, Method::Utilization);
    // Equal loads in the inner window: half each, to the samples' steps.
    EXPECT_NEAR(static_cast<double>(inner.share_mj), static_cast<double>(inner.others_mj()), 0.02 * inner.share_mj);
    expect_conserved(inner_m, inner);
    expect_conserved(outer_m, outer);
    EXPECT_GT(outer.share_mj, 2 * outer.others_mj());   // 3 s shared of 9 s
    EXPECT_FALSE(tracker->end("inner", inner_m).ok());  // closed
    ASSERT_EQ(zeusSimLoadEnd(mine), ZEUS_SIM_OK);
}

TEST_F(WindowSharesSimTest, BadTargetsAreRefusedWithTheFix) {
    WindowSharesOptions options;
    options.target = ShareTarget::processes({});
    auto none = WindowShares::open(gpus_, {0}, options);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("no process id"), std::string::npos);
    options.target = ShareTarget::processes({7, 0});
    ASSERT_FALSE(WindowShares::open(gpus_, {0}, options).ok());
    auto range = WindowShares::open(gpus_, {3}, {});
    ASSERT_FALSE(range.ok());
    EXPECT_NE(range.error().message.find("out of range"), std::string::npos);
}

// On the real clock a thread reads the driver while a window is open; the
// result is the same split.
TEST(WindowSharesRealClockTest, ThePollingThreadFeedsTheOpenWindows) {
    zeus::testing::TestDirectory dir;
    setenv("ZEUS_SIM_STATE", (dir.path() / "state").c_str(), 1);
    std::ofstream(dir.path() / "sim.json") << R"({"clock": "real", "gpus": [{"model": "A100-SXM4-40GB"}]})";
    setenv("ZEUS_SIM_CONFIG", (dir.path() / "sim.json").c_str(), 1);
    GpuOptions options;
    options.simulate = true;
    options.simulator_library = zeus::testing::sim_nvml_library_path();
    Gpus gpus = Gpus::open(options);
    auto monitor = EnergyMonitor::open(gpus, nullptr, nullptr, {}).value();
    WindowSharesOptions share_options;
    share_options.poll_period = std::chrono::milliseconds(20);
    auto tracker = WindowShares::open(gpus, monitor->gpu_indices(), share_options).value();
    int load = -1;
    ASSERT_EQ(zeusSimProcessLoadBegin(0, 0.5, static_cast<int>(kSelf), 1.0, &load), ZEUS_SIM_OK);
    ASSERT_TRUE(monitor->begin_window("w").ok());
    tracker->begin("w");
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    Measurement m = monitor->end_window("w").value();
    WindowShare share = tracker->end("w", m).value().at(0);
    tracker->stop_thread();
    tracker->stop_thread();  // idempotent
    EXPECT_EQ(share.method, Method::Exclusive);
    EXPECT_EQ(share.share_mj, share.gpu_mj);
    EXPECT_GT(share.share_mj, 0);
    ASSERT_EQ(zeusSimLoadEnd(load), ZEUS_SIM_OK);
}

}  // namespace
}  // namespace zeus::attribution
