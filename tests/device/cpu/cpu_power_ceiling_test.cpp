// Cpu::power_ceiling from generated powercap trees: the zone's enforced
// short-term or peak limit, else CpuOptions' bound. Sampled window edges
// bound their extrapolation with it (docs/monitoring.md), so a ceiling
// below what the package can draw would make their bounds untrue.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fake_powercap.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using testing::FakePowercap;

constexpr std::uint64_t kRange = 262'143'328'850;

// A zone's constraint N as the kernel lays it out.
void constrain(const FakePowercap& tree, const fs::path& zone, unsigned n, const std::string& name, double watts) {
    const std::string prefix = "constraint_" + std::to_string(n) + "_";
    tree.write(zone / (prefix + "name"), name + "\n");
    tree.write(zone / (prefix + "power_limit_uw"), std::to_string(static_cast<std::uint64_t>(watts * 1e6)) + "\n");
    tree.write(zone / (prefix + "time_window_us"), "2440\n");
}

CpuPowerCeiling ceiling_of(const FakePowercap& tree, CpuOptions options = {}) {
    options.powercap_root = tree.root().string();
    const Cpus cpus = Cpus::open(options);
    EXPECT_TRUE(cpus.status().ok()) << cpus.status().error().describe();
    return cpus.empty() ? CpuPowerCeiling{} : cpus[0].power_ceiling();
}

TEST(CpuPowerCeiling, IsTheEnforcedShortTermLimitNotTheLongTermOne) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
    tree.write(zone / "enabled", "1\n");
    constrain(tree, zone, 0, "long_term", 165.0);
    constrain(tree, zone, 1, "short_term", 198.0);
    EXPECT_DOUBLE_EQ(ceiling_of(tree).package.count(), 198.0);
}

TEST(CpuPowerCeiling, IsThePeakLimitWhenTheZoneHasOneAboveTheShortTermOne) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
    tree.write(zone / "enabled", "1\n");
    constrain(tree, zone, 0, "long_term", 65.0);
    constrain(tree, zone, 1, "short_term", 120.0);
    constrain(tree, zone, 2, "peak_power", 210.0);
    EXPECT_DOUBLE_EQ(ceiling_of(tree).package.count(), 210.0);
}

TEST(CpuPowerCeiling, IsTheOptionsBoundWhenTheLimitsAreNotEnforcedOrAbsentOrAboveIt) {
    {
        FakePowercap tree;  // limits disabled: the package may draw past them
        const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
        tree.write(zone / "enabled", "0\n");
        constrain(tree, zone, 0, "long_term", 165.0);
        constrain(tree, zone, 1, "short_term", 198.0);
        EXPECT_DOUBLE_EQ(ceiling_of(tree).package.count(), kDefaultMaxPackagePower.count());
    }
    {
        FakePowercap tree;  // only the long-term limit, which turbo exceeds for seconds
        const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
        tree.write(zone / "enabled", "1\n");
        constrain(tree, zone, 0, "long_term", 165.0);
        EXPECT_DOUBLE_EQ(ceiling_of(tree).package.count(), kDefaultMaxPackagePower.count());
    }
    {
        FakePowercap tree;  // no constraint files at all (AMD's RAPL zones)
        tree.add_zone(0, "package-0", 1000, kRange);
        CpuOptions options;
        options.max_package_power = Watts(400.0);
        EXPECT_DOUBLE_EQ(ceiling_of(tree, options).package.count(), 400.0);
    }
    {
        FakePowercap tree;  // firmware's "unlimited" short-term limit
        const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
        tree.write(zone / "enabled", "1\n");
        constrain(tree, zone, 0, "long_term", 4095.875);
        constrain(tree, zone, 1, "short_term", 4095.875);
        EXPECT_DOUBLE_EQ(ceiling_of(tree).package.count(), kDefaultMaxPackagePower.count());
    }
}

TEST(CpuPowerCeiling, DramHasItsOwnFromItsZone) {
    FakePowercap tree;
    const auto zone = tree.add_zone(0, "package-0", 1000, kRange);
    tree.write(zone / "enabled", "1\n");
    constrain(tree, zone, 0, "long_term", 165.0);
    constrain(tree, zone, 1, "short_term", 198.0);
    const auto dram = tree.add_subzone(0, 0, 500, kRange);
    CpuOptions options;
    options.max_dram_power = Watts(80.0);
    const CpuPowerCeiling ceiling = ceiling_of(tree, options);
    EXPECT_DOUBLE_EQ(ceiling.package.count(), 198.0);
    EXPECT_DOUBLE_EQ(ceiling.dram.count(), 80.0);
    tree.write(dram / "enabled", "1\n");
    constrain(tree, dram, 0, "short_term", 30.0);
    EXPECT_DOUBLE_EQ(ceiling_of(tree, options).dram.count(), 30.0);
}

}  // namespace
}  // namespace zeus
