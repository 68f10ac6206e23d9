// The whole-package rule over generated sysfs topology trees: one and two
// packages, held whole or in part, a step left unconfined on a shared node,
// offline CPUs, and the CPU count Slurm gives in the environment.
#include <gtest/gtest.h>

#include <fstream>

#include "slurm/cpu_packages.hpp"
#include "support/test_directory.hpp"

namespace zeus::slurm {
namespace {

// <root>/devices/system/cpu/cpu<N>/topology/physical_package_id for each CPU.
class FakeTopology {
  public:
    void add_cpu(unsigned cpu, unsigned package, bool online = true) {
        const auto dir = dir_.path() / "devices/system/cpu" / ("cpu" + std::to_string(cpu));
        std::filesystem::create_directories(dir / "topology");
        if (online) std::ofstream(dir / "topology/physical_package_id") << package << "\n";
        if (cpu != 0) std::ofstream(dir / "online") << (online ? "1" : "0") << "\n";
    }
    // CPUs 0..per_package*packages-1, package by package.
    void add_packages(unsigned packages, unsigned per_package) {
        for (unsigned p = 0; p < packages; ++p) {
            for (unsigned c = 0; c < per_package; ++c) add_cpu(p * per_package + c, p);
        }
    }
    [[nodiscard]] std::string root() const { return dir_.path().string(); }

  private:
    zeus::testing::TestDirectory dir_;
};

std::set<unsigned> cpus_from(unsigned first, unsigned last) {
    std::set<unsigned> cpus;
    for (unsigned c = first; c <= last; ++c) cpus.insert(c);
    return cpus;
}

PackageHolding holding_of(const FakeTopology& tree, const std::set<unsigned>& allowed,
                          std::optional<unsigned> slurm_cpus) {
    auto topology = read_package_cpus(tree.root());
    EXPECT_TRUE(topology.ok()) << topology.error().describe();
    return whole_packages(*topology, allowed, slurm_cpus);
}

TEST(SlurmCpuPackages, TopologyGroupsOnlineCpusByPackage) {
    FakeTopology tree;
    tree.add_packages(2, 2);
    tree.add_cpu(4, 1, /*online=*/false);
    const auto topology = read_package_cpus(tree.root());
    ASSERT_TRUE(topology.ok()) << topology.error().describe();
    EXPECT_EQ(*topology, (PackageCpus{{0, {0, 1}}, {1, {2, 3}}}));
}

TEST(SlurmCpuPackages, OnePackageHeldWholeIsTheWholeNode) {
    FakeTopology tree;
    tree.add_packages(1, 4);
    const auto holding = holding_of(tree, cpus_from(0, 3), 4);
    EXPECT_EQ(holding.packages, std::vector<unsigned>{0});
    EXPECT_TRUE(holding.whole_node);
    EXPECT_EQ(holding.reason, "");
}

TEST(SlurmCpuPackages, PartOfTheOnlyPackageIsShared) {
    FakeTopology tree;
    tree.add_packages(1, 4);
    const auto holding = holding_of(tree, cpus_from(0, 1), 2);
    EXPECT_TRUE(holding.packages.empty());
    EXPECT_FALSE(holding.whole_node);
    EXPECT_EQ(holding.reason, "shares packages with other jobs: its 2 CPUs cover no whole CPU package");
}

TEST(SlurmCpuPackages, TwoPackagesHeldWhole) {
    FakeTopology tree;
    tree.add_packages(2, 4);
    const auto holding = holding_of(tree, cpus_from(0, 7), 8);
    EXPECT_EQ(holding.packages, (std::vector<unsigned>{0, 1}));
    EXPECT_TRUE(holding.whole_node);
}

TEST(SlurmCpuPackages, OneOfTwoPackagesHeldWhole) {
    FakeTopology tree;
    tree.add_packages(2, 4);
    // Package 1 and one CPU of package 0: only package 1 is the step's own.
    auto allowed = cpus_from(4, 7);
    allowed.insert(0);
    const auto holding = holding_of(tree, allowed, 5);
    EXPECT_EQ(holding.packages, std::vector<unsigned>{1});
    EXPECT_FALSE(holding.whole_node);
    EXPECT_EQ(holding.reason, "");
}

TEST(SlurmCpuPackages, HalfOfEachOfTwoPackagesIsShared) {
    FakeTopology tree;
    tree.add_packages(2, 4);
    const auto holding = holding_of(tree, {0, 1, 4, 5}, 4);
    EXPECT_TRUE(holding.packages.empty());
    EXPECT_NE(holding.reason.find("shares packages with other jobs"), std::string::npos);
}

TEST(SlurmCpuPackages, AnUnconfinedStepWithFewerCpusThanItMayUseIsShared) {
    // TaskPlugin=task/none: every step may run on every CPU, whatever Slurm gave it.
    FakeTopology tree;
    tree.add_packages(2, 4);
    const auto holding = holding_of(tree, cpus_from(0, 7), 2);
    EXPECT_TRUE(holding.packages.empty());
    EXPECT_EQ(holding.reason,
              "shares packages with other jobs: Slurm gave it 2 CPUs on this node, but it may run on 8 CPUs (its CPUs "
              "are not confined to its own, so other jobs may run on the same packages)");
    // More CPUs in Slurm's count than the node has (slurm.conf over-counts): not trusted either.
    EXPECT_TRUE(holding_of(tree, cpus_from(0, 7), 16).packages.empty());
}

TEST(SlurmCpuPackages, NoCpuCountFromSlurmIsShared) {
    FakeTopology tree;
    tree.add_packages(1, 2);
    const auto holding = holding_of(tree, cpus_from(0, 1), std::nullopt);
    EXPECT_TRUE(holding.packages.empty());
    EXPECT_NE(holding.reason.find("SLURM_CPUS_ON_NODE"), std::string::npos) << holding.reason;
}

TEST(SlurmCpuPackages, NoTopologyNamesTheFolder) {
    zeus::testing::TestDirectory empty;
    const auto topology = read_package_cpus(empty.path().string());
    ASSERT_FALSE(topology.ok());
    EXPECT_NE(topology.error().describe().find(empty.path().string() + "/devices/system/cpu"), std::string::npos);
    const auto holding = held_packages(empty.path().string(), [](std::string_view) { return std::nullopt; });
    EXPECT_TRUE(holding.packages.empty());
    EXPECT_NE(holding.reason.find("no CPU topology"), std::string::npos) << holding.reason;
}

TEST(SlurmCpuPackages, SlurmsCpuCountComesFromTheEnvironment) {
    const auto lookup_of = [](std::map<std::string, std::string> vars) -> EnvironmentLookup {
        return [vars](std::string_view name) -> std::optional<std::string> {
            const auto found = vars.find(std::string(name));
            return found == vars.end() ? std::nullopt : std::optional<std::string>(found->second);
        };
    };
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({{"SLURM_CPUS_ON_NODE", "8"}, {"SLURM_JOB_CPUS_PER_NODE", "4"}})), 8U);
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({{"SLURM_JOB_CPUS_PER_NODE", "16(x2)"}})), 16U);
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({{"SLURM_JOB_CPUS_PER_NODE", "16"}})), 16U);
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({{"SLURM_JOB_CPUS_PER_NODE", "8,4(x2)"}})), std::nullopt);
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({{"SLURM_CPUS_ON_NODE", "eight"}})), std::nullopt);
    EXPECT_EQ(slurm_cpus_on_node(lookup_of({})), std::nullopt);
}

}  // namespace
}  // namespace zeus::slurm
