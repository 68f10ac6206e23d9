// Which RAPL zone a process runs on, as the original's
// get_current_rapl_zone_id, against generated /proc, cpu topology and
// powercap trees.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "fake_powercap.hpp"
#include "zeus/device/cpu.hpp"

namespace zeus {
namespace {

namespace fs = std::filesystem;
using testing::FakePowercap;
using testing::FakeTree;

// A /proc/<pid>/stat line whose command name has spaces and parentheses,
// with `cpu` in field 39.
std::string stat_line(int pid, unsigned cpu) {
    std::string line = std::to_string(pid) + " (my (odd) proc) S";
    for (int field = 4; field <= 52; ++field) line += " " + std::to_string(field == 39 ? cpu : 1000 + field);
    return line + "\n";
}

struct Machine {
    FakeTree proc;
    FakeTree cpus;
    FakePowercap powercap;

    void process(int pid, unsigned cpu) const { proc.write(fs::path(std::to_string(pid)) / "stat", stat_line(pid, cpu)); }
    void topology(unsigned cpu, int package, std::optional<int> die) const {
        const fs::path t = fs::path("cpu" + std::to_string(cpu)) / "topology";
        cpus.write(t / "physical_package_id", std::to_string(package) + "\n");
        if (die) cpus.write(t / "die_id", std::to_string(*die) + "\n");
    }
    [[nodiscard]] CpuOptions options() const {
        CpuOptions o;
        o.proc_root = proc.root().string();
        o.cpu_sysfs_root = cpus.root().string();
        o.powercap_root = powercap.root().string();
        return o;
    }
};

TEST(CurrentRaplZone, ZoneOfTheProcessesPackage) {
    Machine m;
    m.process(4242, 5);
    m.topology(5, 1, 0);
    m.powercap.add_zone(0, "package-0", 0, 1000);
    m.powercap.add_zone(1, "package-1", 0, 1000);
    auto zone = current_rapl_zone(4242, m.options());
    ASSERT_TRUE(zone.ok()) << zone.error().describe();
    EXPECT_EQ(*zone, 1U);
}

TEST(CurrentRaplZone, MultiDieZonesMatchTheDie) {
    Machine m;
    m.process(7, 3);
    m.topology(3, 0, 1);
    m.powercap.add_zone(0, "package-0-die-0", 0, 1000);
    m.powercap.add_zone(1, "package-0-die-1", 0, 1000);
    auto zone = current_rapl_zone(7, m.options());
    ASSERT_TRUE(zone.ok()) << zone.error().describe();
    EXPECT_EQ(*zone, 1U);
}

TEST(CurrentRaplZone, WithoutDieIdThePackageNameMatches) {
    Machine m;
    m.process(7, 0);
    m.topology(0, 2, std::nullopt);
    m.powercap.add_zone(0, "package-0", 0, 1000);
    m.powercap.add_zone(3, "package-2", 0, 1000);
    auto zone = current_rapl_zone(7, m.options());
    ASSERT_TRUE(zone.ok()) << zone.error().describe();
    EXPECT_EQ(*zone, 3U);
}

TEST(CurrentRaplZone, NoZoneForThePackage) {
    Machine m;
    m.process(7, 0);
    m.topology(0, 4, 0);
    m.powercap.add_zone(0, "package-0", 0, 1000);
    auto zone = current_rapl_zone(7, m.options());
    ASSERT_FALSE(zone.ok());
    EXPECT_EQ(zone.error().code, ErrorCode::NotSupported);
    EXPECT_NE(zone.error().message.find("package-4"), std::string::npos) << zone.error().message;
}

TEST(CurrentRaplZone, MissingProcessAndMalformedStat) {
    Machine m;
    m.powercap.add_zone(0, "package-0", 0, 1000);
    auto missing = current_rapl_zone(99, m.options());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_NE(missing.error().hint.find("process"), std::string::npos);

    m.proc.write("5/stat", "5 (short) S 1 2 3\n");
    auto short_stat = current_rapl_zone(5, m.options());
    ASSERT_FALSE(short_stat.ok());
    EXPECT_EQ(short_stat.error().code, ErrorCode::InvalidState);
}

TEST(CurrentRaplZone, ThisProcessOnThisMachine) {
    // Real /proc/self/stat and CPU topology; fake zones for every package id
    // this machine has. Expect the zone of this machine's package.
    const fs::path topology_root = "/sys/devices/system/cpu";
    std::set<std::string> packages;
    std::error_code ec;
    for (fs::directory_iterator it(topology_root, ec), end; !ec && it != end; it.increment(ec)) {
        std::ifstream in(it->path() / "topology" / "physical_package_id");
        std::string id;
        if (in >> id) packages.insert(id);
    }
    if (packages.size() != 1) GTEST_SKIP() << "needs a single-package machine with CPU topology in sysfs";
    FakePowercap powercap;
    powercap.add_zone(0, "psys", 0, 1000);
    powercap.add_zone(4, "package-" + *packages.begin(), 0, 1000);
    CpuOptions options;
    options.powercap_root = powercap.root().string();
    auto self = current_rapl_zone(std::nullopt, options);
    ASSERT_TRUE(self.ok()) << self.error().describe();
    EXPECT_EQ(*self, 4U);
    auto by_pid = current_rapl_zone(::getpid(), options);
    ASSERT_TRUE(by_pid.ok()) << by_pid.error().describe();
    EXPECT_EQ(*by_pid, 4U);
}

}  // namespace
}  // namespace zeus
