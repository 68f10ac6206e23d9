// Finding package zones and their DRAM sub-zones in generated powercap trees:
// ordering, layouts (flat, nested, container mount), what is not a package,
// and an empty set that says why when there is no RAPL.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fake_powercap.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using testing::FakePowercap;
using testing::FakeTree;

constexpr std::uint64_t kIntelMax = 262'143'328'850;  // max_energy_range_uj of many Intel parts

CpuOptions options_for(const fs::path& root) {
    CpuOptions options;
    options.powercap_root = root.string();
    return options;
}

TEST(CpuDiscovery, PackagesInNumericOrderWithTheirDramZones) {
    FakePowercap tree;
    tree.add_zone(10, "package-3", 1, kIntelMax);
    tree.add_zone(2, "package-2", 1, kIntelMax);
    tree.add_zone(0, "package-0", 1, kIntelMax);
    tree.add_zone(1, "package-1", 1, kIntelMax);
    tree.add_subzone(0, 0, 5, kIntelMax, "core");
    tree.add_subzone(0, 1, 5, kIntelMax, "dram");
    tree.add_subzone(2, 0, 5, kIntelMax, "dram");
    // The flat class layout also lists sub-zones at the top, and newer
    // kernels add an MMIO interface: neither is a package.
    tree.write("intel-rapl:0:0/name", "core\n");
    tree.write("intel-rapl-mmio:0/name", "package-0\n");

    Cpus cpus = Cpus::open(options_for(tree.root()));
    ASSERT_TRUE(cpus.status().ok()) << cpus.status().error().describe();
    ASSERT_EQ(cpus.size(), 4U);
    const unsigned zones[] = {0, 1, 2, 10};
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(cpus[i].identity().index, i);
        EXPECT_EQ(cpus[i].identity().zone_index, zones[i]);
        EXPECT_TRUE(cpus[i].available()) << cpus[i].status().error().describe();
    }
    EXPECT_EQ(cpus[0].identity().zone_name, "package-0");
    EXPECT_EQ(cpus[3].identity().zone_name, "package-3");
    EXPECT_EQ(cpus[0].identity().path, (tree.root() / "intel-rapl:0").string());
    EXPECT_TRUE(cpus[0].has_dram());
    EXPECT_EQ(cpus[0].identity().dram_path, (tree.root() / "intel-rapl:0" / "intel-rapl:0:1").string());
    EXPECT_FALSE(cpus[1].has_dram());
    EXPECT_TRUE(cpus[2].has_dram());
    EXPECT_TRUE(cpus[2].dram_status().ok());
    EXPECT_EQ(cpus.powercap_root(), tree.root().string());
    EXPECT_TRUE(cpus.warnings().empty());
    ASSERT_TRUE(cpus.by_zone(10).ok());
    EXPECT_EQ((*cpus.by_zone(10))->identity().index, 3U);
    EXPECT_EQ(cpus.by_zone(3).error().code, ErrorCode::NotFound);
}

TEST(CpuDiscovery, NestedLayoutAsMountedByTheOriginalsDockerCommand) {
    // -v /sys/class/powercap/intel-rapl:/zeus_sys/class/powercap/intel-rapl
    FakeTree tree;
    tree.write("intel-rapl/intel-rapl:0/name", "package-0\n");
    tree.write("intel-rapl/intel-rapl:0/energy_uj", "7\n");
    tree.write("intel-rapl/intel-rapl:0/max_energy_range_uj", "1000000\n");
    Cpus cpus = Cpus::open(options_for(tree.root()));
    ASSERT_EQ(cpus.size(), 1U) << (cpus.status().ok() ? "" : cpus.status().error().describe());
    EXPECT_EQ(cpus.powercap_root(), (tree.root() / "intel-rapl").string());
}

TEST(CpuDiscovery, SearchFallsBackToTheContainerMount) {
    FakeTree empty_sys;
    FakePowercap container;
    container.add_zone(0, "package-0", 1, kIntelMax);
    CpuOptions options;
    options.powercap_search = {empty_sys.root().string(), container.root().string()};
    Cpus cpus = Cpus::open(options);
    ASSERT_EQ(cpus.size(), 1U);
    EXPECT_EQ(cpus.powercap_root(), container.root().string());

    // The first place with zones wins.
    FakePowercap sys;
    sys.add_zone(0, "package-0", 1, kIntelMax);
    options.powercap_search = {sys.root().string(), container.root().string()};
    EXPECT_EQ(Cpus::open(options).powercap_root(), sys.root().string());
}

TEST(CpuDiscovery, MaskedPowercapIsExplained) {
    // Docker masks /sys/devices/virtual/powercap: the class links dangle.
    FakeTree sys;
    fs::create_directory_symlink(sys.root() / "devices" / "virtual" / "powercap" / "intel-rapl" / "intel-rapl:0",
                                 sys.root() / "intel-rapl:0");
    CpuOptions options;
    options.powercap_search = {sys.root().string()};
    Cpus cpus = Cpus::open(options);
    EXPECT_TRUE(cpus.empty());
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_NE(cpus.status().error().message.find("masked"), std::string::npos) << cpus.status().error().message;
    EXPECT_NE(cpus.status().error().hint.find("/zeus_sys/devices/virtual/powercap"), std::string::npos);
}

TEST(CpuDiscovery, NoRaplIsAnEmptySetThatSaysWhyAndHowToFix) {
    FakeTree empty;
    Cpus cpus = Cpus::open(options_for(empty.root()));
    EXPECT_TRUE(cpus.empty());
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_EQ(cpus.status().error().code, ErrorCode::NotFound);
    EXPECT_NE(cpus.status().error().message.find(empty.root().string()), std::string::npos);
    EXPECT_FALSE(cpus.status().error().hint.empty());
    EXPECT_FALSE(cpus.sample_period().has_value());
    auto first = cpus.at(0);
    ASSERT_FALSE(first.ok());
    EXPECT_NE(first.error().message.find("no RAPL CPU package"), std::string::npos);
    EXPECT_THROW((void)cpus[0], ZeusError);

    CpuOptions nowhere;
    nowhere.powercap_search = {(empty.root() / "missing").string()};
    Cpus none = Cpus::open(nowhere);
    ASSERT_FALSE(none.status().ok());
    EXPECT_NE(none.status().error().hint.find("intel_rapl_msr"), std::string::npos);
}

TEST(CpuDiscovery, PlatformZoneIsNotAPackage) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1, kIntelMax);
    tree.add_zone(1, "psys", 1, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree.root()));
    ASSERT_EQ(cpus.size(), 1U);
    ASSERT_EQ(cpus.warnings().size(), 1U);
    EXPECT_NE(cpus.warnings()[0].find("intel-rapl:1 (psys)"), std::string::npos) << cpus.warnings()[0];

    FakePowercap only_psys;
    only_psys.add_zone(0, "psys", 1, kIntelMax);
    Cpus none = Cpus::open(options_for(only_psys.root()));
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(none.status().ok());
}

TEST(CpuDiscovery, IndexOutOfRangeNamesTheRange) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1, kIntelMax);
    tree.add_zone(1, "package-1", 1, kIntelMax);
    Cpus cpus = Cpus::open(options_for(tree.root()));
    auto r = cpus.at(2);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("indices 0 to 1"), std::string::npos) << r.error().message;
}

TEST(CpuOptions, PowercapRootFromEnvironment) {
    ::setenv("ZEUS_POWERCAP_ROOT", "/tmp/fake-powercap", 1);
    auto options = CpuOptions::from_environment();
    ASSERT_TRUE(options.ok());
    EXPECT_EQ(options->powercap_root, "/tmp/fake-powercap");
    ::setenv("ZEUS_POWERCAP_ROOT", "", 1);  // empty counts as unset
    EXPECT_FALSE(CpuOptions::from_environment()->powercap_root.has_value());
    ::unsetenv("ZEUS_POWERCAP_ROOT");
    EXPECT_FALSE(CpuOptions::from_environment()->powercap_root.has_value());
}

TEST(CpuOptions, NonPositivePowerBoundIsRefused) {
    FakePowercap tree;
    tree.add_zone(0, "package-0", 1, kIntelMax);
    CpuOptions options = options_for(tree.root());
    options.max_package_power = Watts(0.0);
    Cpus cpus = Cpus::open(options);
    EXPECT_TRUE(cpus.empty());
    ASSERT_FALSE(cpus.status().ok());
    EXPECT_EQ(cpus.status().error().code, ErrorCode::InvalidConfig);
    EXPECT_NE(cpus.status().error().message.find("max_package_power"), std::string::npos);
}

}  // namespace
}  // namespace zeus
