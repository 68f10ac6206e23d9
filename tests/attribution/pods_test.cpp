// Kubernetes names for attribution's workloads (zeus/attribution/pods.hpp):
// the device plugins' ids, and the matching of the pod UIDs and container ids
// seen on GPUs to the kubelet's allocations: named when exactly one choice is
// left, never a guess.
#include <gtest/gtest.h>

#include "pod_test_ids.hpp"
#include "zeus/attribution/pods.hpp"

namespace zeus::attribution {
namespace {

using namespace test_ids;

std::vector<GpuIds> two_gpus() { return {{0, kGpu0, "00000000:3B:00.0", {kMig0}}, {1, kGpu1, "00000000:5E:00.0", {}}}; }

std::string pod_of(const PodNamer& namer, const std::string& uid) {
    const PodName* pod = namer.pod(uid);
    return pod ? pod->pod_namespace + "/" + pod->name : "(none)";
}

std::string container_of(const PodNamer& namer, const std::string& id) {
    const std::string* name = namer.container(id);
    return name ? *name : "(none)";
}

TEST(GpuDeviceIds, EveryDevicePluginFormNamesItsGpu) {
    struct Case {
        std::string id, gpu, mig;
    };
    for (const Case& c :
         {Case{kGpu0, kGpu0, ""}, Case{kGpu0 + "::3", kGpu0, ""},  // a time-sliced replica
          Case{kMig0, "", kMig0}, Case{kMig0 + "::1", "", kMig0},
          Case{"MIG-" + kGpu1 + "/7/0", kGpu1, "MIG-" + kGpu1 + "/7/0"}, Case{"0000:3B:00.0", "0:3b:00.0", ""}}) {
        auto parsed = parse_gpu_device_id(c.id);
        ASSERT_TRUE(parsed) << c.id << ": " << parsed.error().describe();
        EXPECT_EQ(parsed->gpu, c.gpu) << c.id;
        EXPECT_EQ(parsed->mig_uuid, c.mig) << c.id;
    }
}

TEST(GpuDeviceIds, AnythingElseIsAnErrorThatNamesTheId) {
    for (const std::string id : {"", "nvidia0", "GPU-", "GPU-xyz", "MIG-", "MIG-GPU-abc", "::3", "gpu0::1"}) {
        auto parsed = parse_gpu_device_id(id);
        ASSERT_FALSE(parsed) << id;
        EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(parsed.error().message.find("'" + id + "'"), std::string::npos) << parsed.error().message;
    }
}

TEST(GpuDeviceIds, PciAddressesCompareWhateverTheirDomainWidthAndCase) {
    EXPECT_EQ(normalized_pci_address("00000000:3B:00.0"), "0:3b:00.0");
    EXPECT_EQ(normalized_pci_address("0000:3b:00.0"), "0:3b:00.0");
    EXPECT_EQ(normalized_pci_address("3b:00.0"), "0:3b:00.0");
    EXPECT_EQ(normalized_pci_address("0001:3b:00.0"), "1:3b:00.0");
}

TEST(GpuResources, TheGpuDevicePluginsResourcesOnly) {
    for (const char* name : {"nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "amd.com/gpu"}) {
        EXPECT_TRUE(is_gpu_resource(name)) << name;
    }
    for (const char* name : {"", "cpu", "nvidia.com/gpux", "example.com/nic", "amd.com/gpu-partition"}) {
        EXPECT_FALSE(is_gpu_resource(name)) << name;
    }
}

TEST(PodNamer, WholeGpusNameThePodThatHoldsThem) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}, {1, kUidB, kContainer2}};
    EXPECT_TRUE(namer.needs_names(seen));
    const auto errors = namer.learn({{"ml", "train-a", "worker", {kGpu0}}, {"ml", "train-b", "worker", {kGpu1}}}, seen);
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(pod_of(namer, kUidA), "ml/train-a");
    EXPECT_EQ(pod_of(namer, kUidB), "ml/train-b");
    EXPECT_EQ(container_of(namer, kContainer1), "worker");
    EXPECT_EQ(container_of(namer, kContainer2), "worker");
    EXPECT_FALSE(namer.needs_names(seen));
}

TEST(PodNamer, SeveralContainersOfOnePodAreToldApartByTheirGpus) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}, {1, kUidA, kContainer2}};
    namer.learn({{"ml", "pair", "left", {kGpu0}}, {"ml", "pair", "right", {kGpu1}}, {"ml", "pair", "sidecar", {}}},
                seen);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/pair");
    EXPECT_EQ(container_of(namer, kContainer1), "left");
    EXPECT_EQ(container_of(namer, kContainer2), "right");
}

TEST(PodNamer, TwoContainersOnTheSameGpuKeepTheirIdsOnly) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}, {0, kUidA, kContainer2}};
    namer.learn({{"ml", "pair", "left", {kGpu0 + "::0"}}, {"ml", "pair", "right", {kGpu0 + "::1"}}}, seen);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/pair");
    EXPECT_EQ(container_of(namer, kContainer1), "(none)");
    EXPECT_EQ(container_of(namer, kContainer2), "(none)");
}

TEST(PodNamer, TimeSlicedReplicasNameTheirGpusPods) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}, {1, kUidB, kContainer2}};
    namer.learn({{"ml", "a", "c", {kGpu0 + "::0", kGpu0 + "::1"}}, {"ml", "b", "c", {kGpu1 + "::3"}}}, seen);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
    EXPECT_EQ(pod_of(namer, kUidB), "ml/b");
}

TEST(PodNamer, ReplicasOfOneGpuInTwoPodsCannotBeToldApart) {
    PodNamer namer(two_gpus());
    // Only one of the two pods runs: still either of them.
    const std::set<PodSighting> one{{0, kUidA, kContainer1}};
    namer.learn({{"ml", "a", "c", {kGpu0 + "::0"}}, {"ml", "b", "c", {kGpu0 + "::1"}}}, one);
    EXPECT_EQ(pod_of(namer, kUidA), "(none)");
    const std::set<PodSighting> both{{0, kUidA, kContainer1}, {0, kUidB, kContainer2}};
    namer.learn({{"ml", "a", "c", {kGpu0 + "::0"}}, {"ml", "b", "c", {kGpu0 + "::1"}}}, both);
    EXPECT_EQ(pod_of(namer, kUidA), "(none)");
    EXPECT_EQ(pod_of(namer, kUidB), "(none)");
}

TEST(PodNamer, APodNamedBeforeLeavesTheOtherChoiceToTheNext) {
    PodNamer namer(two_gpus());
    const std::vector<ContainerAllocation> shared{{"ml", "a", "c", {kGpu0 + "::0", kGpu1}},
                                                  {"ml", "b", "c", {kGpu0 + "::1"}}};
    // A seen on both GPUs: only pod a has both.
    namer.learn(shared, {{0, kUidA, kContainer1}, {1, kUidA, kContainer1}});
    ASSERT_EQ(pod_of(namer, kUidA), "ml/a");
    // B then on GPU 0: a is A's while A lives, so B is b.
    namer.learn(shared, {{0, kUidA, kContainer1}, {0, kUidB, kContainer2}});
    EXPECT_EQ(pod_of(namer, kUidB), "ml/b");
}

TEST(PodNamer, MigInstancesNameTheirPodsByTheirGpu) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}, {1, kUidB, kContainer2}};
    // kMig0 is listed on GPU 0; GPU 1's instance in the older MIG-GPU-<uuid>/<gi>/<ci> form.
    namer.learn({{"ml", "a", "c", {kMig0}}, {"ml", "b", "c", {"MIG-" + kGpu1 + "/1/0"}}}, seen);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
    EXPECT_EQ(pod_of(namer, kUidB), "ml/b");
}

TEST(PodNamer, AnUnlistedMigInstanceMayBeOnAnyGpu) {
    PodNamer namer(two_gpus());
    namer.learn({{"ml", "a", "c", {kMig1}}}, {{1, kUidA, kContainer1}});
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");  // the only pod with a GPU
    PodNamer two(two_gpus());
    two.learn({{"ml", "a", "c", {kMig1}}, {"ml", "b", "c", {kMig1 + "::1"}}}, {{1, kUidA, kContainer1}});
    EXPECT_EQ(pod_of(two, kUidA), "(none)");  // either pod
}

TEST(PodNamer, TwoUidsOnAGpuOfOnePodNameNeither) {
    // A privileged pod that sees every GPU runs on pod a's GPU: one of the two UIDs is not a's.
    PodNamer namer(two_gpus());
    namer.learn({{"ml", "a", "c", {kGpu0}}}, {{0, kUidA, kContainer1}, {0, kUidB, kContainer2}});
    EXPECT_EQ(pod_of(namer, kUidA), "(none)");
    EXPECT_EQ(pod_of(namer, kUidB), "(none)");
}

TEST(PodNamer, AnUnknownDeviceIdIsAnErrorAndTheRestStillNames) {
    PodNamer namer(two_gpus());
    const auto errors = namer.learn(
        {{"ml", "a", "c", {"nvidia0", kGpu0}}, {"ml", "b", "c", {"GPU-ffffffff-0000-4000-8000-00000000ffff"}}},
        {{0, kUidA, kContainer1}, {1, kUidB, kContainer2}});
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].message.find("'nvidia0'"), std::string::npos);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
    // b holds a GPU that is not here: it is not what runs on GPU 1.
    EXPECT_EQ(pod_of(namer, kUidB), "(none)");
}

TEST(PodNamer, PciAddressesNameAmdPods) {
    PodNamer namer(two_gpus());
    namer.learn({{"ml", "a", "c", {"0000:5e:00.0"}}}, {{1, kUidA, kContainer1}});
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
}

TEST(PodNamer, AGpuAllocatedWholeToOneContainerIsItsHolders) {
    PodNamer namer(two_gpus());
    namer.learn({{"ml", "a", "c", {kGpu0}}}, {{0, kUidA, kContainer1}});
    const auto holders = namer.holders({{"ml", "a", "c", {kGpu0}}, {"ml", "b", "d", {"0000:5e:00.0"}}});
    ASSERT_EQ(holders.size(), 2U);
    EXPECT_EQ(holders.at(0).pod, (PodName{"ml", "a"}));
    EXPECT_EQ(holders.at(0).container_name, "c");
    EXPECT_EQ(holders.at(0).pod_uid, kUidA);  // named from a sighting
    EXPECT_EQ(holders.at(1).pod, (PodName{"ml", "b"}));
    EXPECT_EQ(holders.at(1).pod_uid, "");  // no process of it seen yet
}

TEST(PodNamer, SharedOrPartialGpusHaveNoHolder) {
    PodNamer namer(two_gpus());
    // Replicas (even all of one GPU's in one container), a MIG instance, two containers on one GPU.
    EXPECT_TRUE(namer.holders({{"ml", "a", "c", {kGpu0 + "::0", kGpu0 + "::1"}}}).empty());
    EXPECT_TRUE(namer.holders({{"ml", "a", "c", {kMig0}}}).empty());
    EXPECT_TRUE(namer.holders({{"ml", "a", "c", {kGpu1}}, {"ml", "a", "d", {kGpu1 + "::1"}}}).empty());
    EXPECT_TRUE(namer.holders({{"ml", "a", "c", {"nvidia0"}}}).empty());
}

TEST(PodNamer, NamesStayWhileLiveAndGoWhenTheWorkloadEnds) {
    PodNamer namer(two_gpus());
    const std::set<PodSighting> seen{{0, kUidA, kContainer1}};
    namer.learn({{"ml", "a", "c", {kGpu0}}}, seen);
    ASSERT_EQ(pod_of(namer, kUidA), "ml/a");
    // The kubelet no longer lists it (or is down): the name stays.
    namer.learn({}, seen);
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
    EXPECT_EQ(container_of(namer, kContainer1), "c");
    namer.retain({kUidA}, {kContainer1});
    EXPECT_EQ(pod_of(namer, kUidA), "ml/a");
    namer.retain({}, {});
    EXPECT_EQ(pod_of(namer, kUidA), "(none)");
    EXPECT_EQ(container_of(namer, kContainer1), "(none)");
    EXPECT_TRUE(namer.needs_names(seen));
}

}  // namespace
}  // namespace zeus::attribution
