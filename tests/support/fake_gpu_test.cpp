// The fake GPU answers as scripted: the other unit tests rely on it, so its
// own arithmetic is checked here against numbers worked out by hand.
#include "support/fake_gpu.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;
using Call = FakeGpu::Call;

TEST(FakeGpu, EnergyIsTheDrawnPowerIntegratedOverItsClock) {
    auto clock = std::make_shared<ManualClock>();
    const auto start = clock->now();
    FakeGpu gpu(0, clock);
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(0));
    clock->advance(2s);  // 300 W (the default) × 2 s = 600 J
    gpu.draw(Milliwatts(100'000));
    clock->advance(1.5s);  // + 100 W × 1.5 s = 150 J
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(750'000));
    EXPECT_EQ(gpu.energy_by_script(), Millijoules(750'000));
    const EnergySnapshot snapshot = gpu.energy_snapshot().value();
    EXPECT_EQ(snapshot.energy, Millijoules(750'000));
    EXPECT_EQ(snapshot.refreshed_at, start + 3500ms);
    EXPECT_EQ(snapshot.power, Milliwatts(100'000));
    EXPECT_EQ(gpu.instant_power().value().power, Milliwatts(100'000));
}

TEST(FakeGpu, ACounterWithARefreshPeriodHoldsItsLastRefresh) {
    auto clock = std::make_shared<ManualClock>();
    const auto start = clock->now();
    FakeGpu gpu(0, clock);
    gpu.refresh_every(100ms);
    clock->advance(250ms);  // last refresh at 200 ms: 300 W × 0.2 s = 60 J
    const EnergySnapshot snapshot = gpu.energy_snapshot().value();
    EXPECT_EQ(snapshot.energy, Millijoules(60'000));
    EXPECT_EQ(snapshot.refreshed_at, start + 200ms);
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(60'000));
}

TEST(FakeGpu, ScriptedAnswersComeInOrderThenTheSteadyState) {
    auto clock = std::make_shared<ManualClock>();
    FakeGpu gpu(0, clock);
    gpu.script_energy({Millijoules(5), Error{ErrorCode::NotReady, "not yet", "", 0}, Millijoules(9)});
    gpu.script_temperature({Celsius(71.0)});
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(5));
    EXPECT_EQ(gpu.energy_snapshot().error().code, ErrorCode::NotReady);
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(9));
    clock->advance(1s);
    EXPECT_EQ(gpu.total_energy().value(), Millijoules(300'000));
    EXPECT_EQ(gpu.temperature().value(), Celsius(71.0));
    EXPECT_EQ(gpu.temperature().value(), Celsius(50.0));
}

TEST(FakeGpu, InjectedErrorsFailTheirCallsAsOftenAsScripted) {
    FakeGpu gpu;
    gpu.fail(Call::SetPowerLimit, Error{ErrorCode::NoPermission, "denied", "run as root", 0}, 2);
    EXPECT_EQ(gpu.set_power_limit(Milliwatts(300'000)).error().code, ErrorCode::NoPermission);
    EXPECT_EQ(gpu.set_power_limit(Milliwatts(300'000)).error().hint, "run as root");
    EXPECT_TRUE(gpu.set_power_limit(Milliwatts(300'000)).ok());
    EXPECT_EQ(gpu.calls(Call::SetPowerLimit), 3U);
    EXPECT_EQ(gpu.calls(Call::PowerLimit), 0U);

    gpu.fail(Call::Temperature, Error{ErrorCode::NotSupported, "no sensor", "", 0});  // forever
    for (int i = 0; i < 3; ++i) EXPECT_EQ(gpu.temperature().error().code, ErrorCode::NotSupported);
}

TEST(FakeGpu, ALostGpuFailsEveryReadingUntilItRecovers) {
    FakeGpu gpu;
    gpu.lose();
    EXPECT_EQ(gpu.total_energy().error().code, ErrorCode::GpuLost);
    EXPECT_EQ(gpu.energy_snapshot().error().code, ErrorCode::GpuLost);
    EXPECT_EQ(gpu.instant_power().error().code, ErrorCode::GpuLost);
    EXPECT_EQ(gpu.temperature().error().code, ErrorCode::GpuLost);
    EXPECT_EQ(gpu.power_limit().error().code, ErrorCode::GpuLost);
    gpu.recover();
    EXPECT_TRUE(gpu.total_energy().ok());
    EXPECT_EQ(gpu.calls(Call::TotalEnergy), 2U);
}

TEST(FakeGpu, SettingsAreKeptAndALimitOutsideTheConstraintsIsRefused) {
    FakeGpu gpu;
    gpu.set_constraints(Milliwatts(100'000), Milliwatts(300'000), Milliwatts(300'000));
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(300'000));
    EXPECT_TRUE(gpu.set_power_limit(Milliwatts(150'000)).ok());
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(150'000));
    EXPECT_EQ(gpu.set_power_limit(Milliwatts(350'000)).error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(150'000));
    EXPECT_TRUE(gpu.reset_power_limit().ok());
    EXPECT_EQ(gpu.power_limit().value(), Milliwatts(300'000));

    EXPECT_EQ(gpu.set_gpu_locked_clocks(Megahertz(1410), Megahertz(210)).error().code, ErrorCode::InvalidArgument);
    EXPECT_FALSE(gpu.locked_gpu_clocks().has_value());
    EXPECT_TRUE(gpu.set_gpu_locked_clocks(Megahertz(210), Megahertz(1410)).ok());
    EXPECT_EQ(gpu.locked_gpu_clocks(), std::pair(Megahertz(210), Megahertz(1410)));
    EXPECT_TRUE(gpu.reset_locked_clocks().ok());  // Gpu's own: both resets
    EXPECT_FALSE(gpu.locked_gpu_clocks().has_value());
    EXPECT_EQ(gpu.calls(Call::ResetMemoryLockedClocks), 1U);
    EXPECT_TRUE(gpu.set_persistence_mode(false).ok());
    EXPECT_FALSE(gpu.persistence_mode().value());
}

// A monitor's own threads read too: each thread's calls are counted apart.
TEST(FakeGpu, CallsAreCountedPerThread) {
    FakeGpu gpu;
    gpu.lose();  // failed calls count as well
    (void)gpu.total_energy();
    gpu.recover();
    (void)gpu.total_energy();
    std::thread::id other;
    std::thread([&] {
        other = std::this_thread::get_id();
        (void)gpu.total_energy();
        (void)gpu.instant_power();
    }).join();
    const auto self = std::this_thread::get_id();
    EXPECT_EQ(gpu.calls(Call::TotalEnergy), 3U);
    EXPECT_EQ(gpu.calls_on(self, Call::TotalEnergy), 2U);
    EXPECT_EQ(gpu.calls_on(self, Call::Power), 0U);
    EXPECT_EQ(gpu.calls_on(other, Call::TotalEnergy), 1U);
    EXPECT_EQ(gpu.calls_on(other, Call::Power), 1U);
}

TEST(FakeGpu, UnsupportedPowerDomainsAreRefusedAsTheCapabilitiesSay) {
    FakeGpu gpu;
    EXPECT_EQ(gpu.memory_power().error().code, ErrorCode::NotSupported);
    gpu.script_capabilities().memory_power = {Capability::yes(), PowerScope::Memory};
    EXPECT_TRUE(gpu.memory_power().ok());
}

TEST(FakeGpu, EveryCallTakesAtLeastItsLatency) {
    FakeGpu gpu;
    gpu.set_latency(20ms);
    const auto t0 = std::chrono::steady_clock::now();
    (void)gpu.instant_power();
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
}

TEST(FakeGpu, ASetOfFakesIsScriptedOneByOne) {
    const Gpus gpus = fake_gpus(2, [](FakeGpu& gpu) { gpu.draw(Milliwatts(100'000 * (gpu.identity().index + 1))); });
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus.backend_info().backend, "fake");
    EXPECT_EQ(gpus[1].instant_power().value().power, Milliwatts(200'000));
    EXPECT_EQ(fake(gpus, 0).calls(Call::Power), 0U);
}

TEST(FakeGpu, ASetOnOneManualClockMovesTogether) {
    auto clock = std::make_shared<ManualClock>();
    const Gpus gpus =
        fake_gpus_on(clock, 2, [](FakeGpu& gpu) { gpu.draw(Milliwatts(100'000 * (gpu.identity().index + 1))); });
    ASSERT_EQ(gpus.size(), 2U);
    EXPECT_EQ(gpus.backend_info().physical_gpu_count, 2U);
    clock->advance(2s);  // 100 W and 200 W × 2 s
    EXPECT_EQ(gpus[0].total_energy().value(), Millijoules(200'000));
    EXPECT_EQ(gpus[1].total_energy().value(), Millijoules(400'000));
    EXPECT_EQ(fake(gpus, 1).calls(Call::TotalEnergy), 1U);
}

}  // namespace
}  // namespace zeus::testing
