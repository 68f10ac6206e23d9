// Energy totals from generated powercap trees whose energy_uj files the test
// rewrites between reads. Expected totals are computed from the values
// written, never from the code under test.
//
// The accumulator judges every step against real time and the power bound
// (a step faster than max power is a glitch, reads further apart than half a
// wrap at max power are late), so each test picks a range and a bound that
// are consistent with how fast it writes: e.g. a 5 J register under a 1 W
// bound allows 30 mJ per read and flags reads over 5 s apart.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "fake_powercap.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::FakePowercap;

constexpr std::uint64_t kIntelMax = 262'143'328'850;  // max_energy_range_uj of many Intel parts

CpuOptions options_for(const FakePowercap& tree) {
    CpuOptions options;
    options.powercap_root = tree.root().string();
    return options;
}

// A register as the test writes it: the value shown, the energy added since
// the start and the wraps seen, from the steps alone.
struct Register {
    std::uint64_t modulus;  // max_energy_range_uj + 1
    std::uint64_t value;
    std::uint64_t added = 0;
    std::uint64_t wraps = 0;

    void step(std::uint64_t counts) {
        const std::uint64_t next = (value + counts) % modulus;
        if (next < value) ++wraps;
        added += counts;
        value = next;
    }
};

class WrapsInOneWindow : public ::testing::TestWithParam<int> {};

TEST_P(WrapsInOneWindow, TotalsAreExact) {
    const int wraps = GetParam();
    // Package: a 5 J register starting 50 mJ below the top, 25 mJ per step,
    // 200 steps per wrap. DRAM: a 2.5 J register, 17 mJ per step, so it wraps
    // at other times (2, 3 and 7 times in the windows below). Under a 1 W
    // bound a step of up to 30 mJ is plausible however fast the reads come,
    // and reads count as late only when 5 s apart.
    Register package{5'000'000, 4'950'000};
    Register dram{2'500'000, 2'450'000};
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", package.value, package.modulus - 1);
    const auto dram_zone = tree.add_subzone(0, 1, dram.value, dram.modulus - 1);
    CpuOptions options = options_for(tree);
    options.max_package_power = Watts(1.0);
    options.max_dram_power = Watts(1.0);
    Cpus cpus = Cpus::open(options);
    ASSERT_EQ(cpus.size(), 1U);
    const Cpu& cpu = cpus[0];
    ASSERT_TRUE(cpu.available()) << cpu.status().error().describe();
    ASSERT_TRUE(cpu.has_dram());

    double last_package = 0.0;
    for (int i = 0; i < 200 * wraps; ++i) {
        package.step(25'000);
        dram.step(17'000);
        tree.set_energy(zone, package.value);
        tree.set_energy(dram_zone, dram.value);
        auto energy = cpu.total_energy();  // a read per step sees every wrap
        ASSERT_TRUE(energy.ok()) << energy.error().describe();
        ASSERT_GE(energy->package.count(), last_package) << "total went backwards at step " << i;
        last_package = energy->package.count();
    }
    ASSERT_EQ(package.wraps, static_cast<std::uint64_t>(wraps));  // the window is what it claims
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_DOUBLE_EQ(energy->package.count(), static_cast<double>(package.added) * 1e-6);
    ASSERT_TRUE(energy->dram.has_value());
    EXPECT_DOUBLE_EQ(energy->dram->count(), static_cast<double>(dram.added) * 1e-6);
    EXPECT_EQ(energy->package_stats.wraps, package.wraps);
    ASSERT_TRUE(energy->dram_stats.has_value());
    EXPECT_EQ(energy->dram_stats->wraps, dram.wraps);
    EXPECT_TRUE(energy->exact()) << "late reads: " << energy->package_stats.late_reads;
}

INSTANTIATE_TEST_SUITE_P(Counts, WrapsInOneWindow, ::testing::Values(1, 2, 5));

TEST(CpuEnergy, SamplerAloneSeesEveryWrap) {
    // No user reads during the window: the Cpus set's own thread must see
    // each value. A 10 J register under a 10 W bound; 250 mJ per step.
    Register package{10'000'000, 9'000'000};
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", package.value, package.modulus - 1);
    CpuOptions options = options_for(tree);
    options.max_package_power = Watts(10.0);
    options.sample_period = 1ms;
    Cpus cpus = Cpus::open(options);
    ASSERT_EQ(cpus.size(), 1U);
    ASSERT_EQ(cpus.sample_period(), std::chrono::nanoseconds(1ms));
    const Cpu& cpu = cpus[0];

    // accumulated() shows the sampler's progress without reading the file.
    // Wait for two sampler reads after each write: the first may have
    // opened the file before the write.
    auto samples = [&] {
        auto e = cpu.accumulated();
        return e.ok() ? e->package_stats.samples : 0;
    };
    for (int i = 0; i < 120; ++i) {  // 3 wraps
        package.step(250'000);
        tree.set_energy(zone, package.value);
        const auto before = samples();
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (samples() < before + 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(200us);
    }
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_EQ(package.wraps, 3U);
    EXPECT_DOUBLE_EQ(energy->package.count(), static_cast<double>(package.added) * 1e-6);
    EXPECT_EQ(energy->package_stats.wraps, 3U);
    EXPECT_TRUE(energy->exact());
}

TEST(CpuEnergy, ReadingEqualToTheMaximumIsValid) {
    // energy_uj shows max_energy_range_uj itself before wrapping to 0, so the
    // register's modulus is max + 1 (the original wraps at max).
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 99'998, 99'999);
    CpuOptions options = options_for(tree);
    options.max_package_power = Watts(0.01);
    Cpus cpus = Cpus::open(options);
    const Cpu& cpu = cpus[0];
    for (const std::uint64_t v : {99'999ULL, 0ULL, 1ULL}) {
        tree.set_energy(zone, v);
        ASSERT_TRUE(cpu.package_energy().ok());
    }
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_DOUBLE_EQ(energy->package.count(), 3e-6);  // 99'998 -> 99'999 -> 0 -> 1
    EXPECT_EQ(energy->package_stats.wraps, 1U);
    EXPECT_TRUE(energy->exact());
}

TEST(CpuEnergy, ResetIsFlaggedAndCountedNeverNegative) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 100'000'000'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));
    const Cpu& cpu = cpus[0];
    std::vector<double> totals;
    // +0.4 J; the counter restarts (driver reload) and has counted 1234 µJ; +1000 µJ.
    for (const std::uint64_t v : {100'000'400'000ULL, 1'234ULL, 2'234ULL}) {
        tree.set_energy(zone, v);
        auto e = cpu.package_energy();
        ASSERT_TRUE(e.ok());
        totals.push_back(e->count());
    }
    EXPECT_TRUE(std::is_sorted(totals.begin(), totals.end()));
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_DOUBLE_EQ(energy->package.count(), (400'000 + 1'234 + 1'000) * 1e-6);
    EXPECT_EQ(energy->package_stats.resets, 1U);
    EXPECT_EQ(energy->package_stats.wraps, 0U);
    EXPECT_FALSE(energy->exact());
}

TEST(CpuEnergy, BackwardGlitchIsIgnoredAndCounted) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 100'000'000'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));
    const Cpu& cpu = cpus[0];
    std::vector<double> totals;
    // +0.5 J; a read 1 kJ in the past; then +0.5 J from the good baseline.
    for (const std::uint64_t v : {100'000'500'000ULL, 99'000'000'000ULL, 100'001'000'000ULL}) {
        tree.set_energy(zone, v);
        auto e = cpu.package_energy();
        ASSERT_TRUE(e.ok());
        totals.push_back(e->count());
    }
    EXPECT_TRUE(std::is_sorted(totals.begin(), totals.end()));
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_DOUBLE_EQ(energy->package.count(), 1.0);
    EXPECT_EQ(energy->package_stats.backward_glitches, 1U);
    EXPECT_EQ(energy->package_stats.wraps, 0U) << "a step back is not a wrap of a 262 kJ register";
    EXPECT_FALSE(energy->exact());
}

TEST(CpuEnergy, ImpossibleJumpIsIgnoredAndCounted) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));  // 1000 W bound
    const Cpu& cpu = cpus[0];
    tree.set_energy(zone, 5'000'001'000);  // 5 kJ within milliseconds
    ASSERT_TRUE(cpu.package_energy().ok());
    tree.set_energy(zone, 5'002'001'000);  // then 2 J
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_DOUBLE_EQ(energy->package.count(), 2.0);
    EXPECT_EQ(energy->package_stats.jump_glitches, 1U);
    EXPECT_FALSE(energy->exact());
}

TEST(CpuEnergy, TotalsCountFromWhenTheSetWasOpened) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 50'000'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));
    auto at_open = cpus[0].total_energy();
    ASSERT_TRUE(at_open.ok());
    EXPECT_DOUBLE_EQ(at_open->package.count(), 0.0);
    tree.set_energy(zone, 53'000'000);
    EXPECT_DOUBLE_EQ(cpus[0].package_energy()->count(), 3.0);
    // Default period: half of 262 kJ at 1000 W is 131 s, capped to 60 s.
    EXPECT_EQ(cpus.sample_period(), std::chrono::nanoseconds(60s));
}

TEST(CpuEnergy, MissingDramZoneIsNotAZero) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));
    const Cpu& cpu = cpus[0];
    EXPECT_FALSE(cpu.has_dram());
    auto energy = cpu.total_energy();
    ASSERT_TRUE(energy.ok());
    EXPECT_FALSE(energy->dram.has_value());
    EXPECT_FALSE(energy->dram_stats.has_value());
    auto dram = cpu.dram_energy();
    ASSERT_FALSE(dram.ok());
    EXPECT_EQ(dram.error().code, ErrorCode::NotSupported);
    EXPECT_EQ(cpu.dram_status().error().code, ErrorCode::NotSupported);
}

TEST(CpuEnergy, UnreadableDramFailsTheTotalButNotThePackage) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1'000, kIntelMax);
    const auto dram_zone = tree.add_subzone(0, 1, 1'000, kIntelMax);
    fs::remove(dram_zone / "energy_uj");
    fs::create_directory(dram_zone / "energy_uj");  // read() fails with EISDIR, even for root
    Cpus cpus = Cpus::open(options_for(tree));
    const Cpu& cpu = cpus[0];
    EXPECT_TRUE(cpu.available());
    EXPECT_TRUE(cpu.has_dram());
    ASSERT_FALSE(cpu.dram_status().ok());
    auto total = cpu.total_energy();
    ASSERT_FALSE(total.ok()) << "a DRAM zone that cannot be read must not vanish into nullopt or 0";
    EXPECT_NE(total.error().message.find((dram_zone / "energy_uj").string()), std::string::npos)
        << total.error().message;
    EXPECT_TRUE(cpu.package_energy().ok());
    ASSERT_EQ(cpus.warnings().size(), 1U);
    EXPECT_NE(cpus.warnings()[0].find("DRAM not measured"), std::string::npos);
}

TEST(CpuEnergy, EnergyFileThatCannotBeReadMakesTheCpuUnavailable) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1'000, kIntelMax);
    fs::remove(zone / "energy_uj");
    fs::create_directory(zone / "energy_uj");
    Cpus cpus = Cpus::open(options_for(tree));
    ASSERT_TRUE(cpus.status().ok());  // the zone exists; this CPU's status says what is wrong
    ASSERT_EQ(cpus.size(), 1U);
    const Cpu& cpu = cpus[0];
    ASSERT_FALSE(cpu.available());
    EXPECT_EQ(cpu.status().error().code, ErrorCode::OperatingSystem);
    EXPECT_NE(cpu.status().error().message.find((zone / "energy_uj").string()), std::string::npos);
    EXPECT_FALSE(cpu.total_energy().ok());
    EXPECT_FALSE(cpu.package_energy().ok());
    EXPECT_EQ(cpus.warnings().size(), 1U);
    EXPECT_FALSE(cpus.sample_period().has_value()) << "nothing readable to sample";
}

TEST(CpuEnergy, MissingEnergyFile) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1'000, kIntelMax);
    fs::remove(zone / "energy_uj");
    Cpus cpus = Cpus::open(options_for(tree));
    ASSERT_FALSE(cpus[0].available());
    EXPECT_EQ(cpus[0].status().error().code, ErrorCode::NotFound);
}

TEST(CpuEnergy, MalformedContentIsAnErrorNamingTheFileNeverAZero) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1'000'000, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree));
    const Cpu& cpu = cpus[0];
    tree.write(zone / "energy_uj", "12abc\n");
    auto bad = cpu.total_energy();
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::InvalidState);
    EXPECT_NE(bad.error().message.find("energy_uj"), std::string::npos);
    EXPECT_NE(bad.error().message.find("12abc"), std::string::npos);
    tree.write(zone / "energy_uj", "\n");
    EXPECT_FALSE(cpu.total_energy().ok());
    // Once the file is sane again, the total resumes from the last good reading.
    tree.set_energy(zone, 1'500'000);
    auto good = cpu.total_energy();
    ASSERT_TRUE(good.ok());
    EXPECT_DOUBLE_EQ(good->package.count(), 0.5);
}

TEST(CpuEnergy, MalformedAtOpen) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 0, kIntelMax);
    tree.write(zone / "energy_uj", "-5\n");
    Cpus cpus = Cpus::open(options_for(tree));
    ASSERT_FALSE(cpus[0].available());
    EXPECT_EQ(cpus[0].status().error().code, ErrorCode::InvalidState);
}

TEST(CpuEnergy, MissingRangeMeansTheCounterIsNotUsed) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1'000, std::nullopt);
    Cpus cpus = Cpus::open(options_for(tree));
    ASSERT_EQ(cpus.size(), 1U);
    const Cpu& cpu = cpus[0];
    ASSERT_FALSE(cpu.available());
    EXPECT_EQ(cpu.status().error().code, ErrorCode::NotFound);
    EXPECT_NE(cpu.status().error().message.find((zone / "max_energy_range_uj").string()), std::string::npos);
    EXPECT_NE(cpu.status().error().message.find("wraparound"), std::string::npos);
    EXPECT_FALSE(cpu.total_energy().ok());
}

TEST(CpuEnergy, ZeroRangeIsRejected) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1'000, 0);
    Cpus cpus = Cpus::open(options_for(tree));
    ASSERT_FALSE(cpus[0].available());
    EXPECT_EQ(cpus[0].status().error().code, ErrorCode::InvalidState);
}

std::size_t thread_count() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
    return n;
}

TEST(CpuEnergy, SamplerThreadIsJoinedWithTheSet) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1'000, kIntelMax);
    const std::size_t before = thread_count();
    {
        Cpus cpus = Cpus::open(options_for(tree));
        EXPECT_EQ(thread_count(), before + 1);
        Cpus moved = std::move(cpus);  // the thread moves with the set
        EXPECT_EQ(thread_count(), before + 1);
        EXPECT_TRUE(moved[0].total_energy().ok());
    }
    EXPECT_EQ(thread_count(), before);
}

TEST(CpuEnergy, PeriodLongerThanSafeIsWarned) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1'000, 999'999);  // 1 J: wraps in 1 ms at 1000 W
    CpuOptions options = options_for(tree);
    options.sample_period = 1s;
    Cpus cpus = Cpus::open(options);
    ASSERT_EQ(cpus.warnings().size(), 1U);
    EXPECT_NE(cpus.warnings()[0].find("wraps may be missed"), std::string::npos) << cpus.warnings()[0];
}

}  // namespace
}  // namespace zeus
