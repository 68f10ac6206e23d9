// The kubelet's PodResources v1 client (zeus/attribution/kubelet.hpp) against
// a fake kubelet serving the real gRPC service on a Unix socket: the GPU
// devices of each container, then the pods they name; and every way the
// kubelet fails (not there, too slow, a malformed reply) as an error of its
// own, never a crash and never a name.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "fake_kubelet.hpp"
#include "pod_test_ids.hpp"
#include "support/test_directory.hpp"
#include "zeus/attribution/kubelet.hpp"

namespace zeus::testing {
namespace {

using attribution::ContainerAllocation;
using attribution::KubeletOptions;
using attribution::KubeletPodResources;
using namespace std::chrono_literals;

using namespace attribution::test_ids;

// A node with every kind of GPU allocation, and what is not a GPU.
std::vector<FakePod> node_pods() {
    return {
        {"ml", "trainer", {{"main", {{"nvidia.com/gpu", {kGpu0}}, {"example.com/nic", {"eth1"}}}}, {"logger", {}}}},
        {"ml", "mig-job", {{"worker", {{"nvidia.com/mig-1g.10gb", {kMig1}}}}}},
        {"serve",
         "replicas",
         {{"a", {{"nvidia.com/gpu.shared", {kGpu1 + "::2"}}}}, {"b", {{"nvidia.com/gpu", {kGpu1 + "::3"}}}}}},
        {"kube-system", "dns", {{"coredns", {{"cpu", {"1"}}}}}},
    };
}

std::string describe(const std::vector<ContainerAllocation>& allocations) {
    std::string out;
    for (const auto& a : allocations) {
        out += a.pod_namespace + "/" + a.pod_name + "/" + a.container_name + ":";
        for (const auto& id : a.device_ids) out += " " + id;
        out += "\n";
    }
    return out;
}

class Kubelet : public ::testing::Test {
  protected:
    std::filesystem::path socket() const { return dir_.path() / "kubelet.sock"; }
    KubeletPodResources client(std::chrono::milliseconds deadline = 1000ms) const {
        return KubeletPodResources(KubeletOptions{socket().string(), deadline});
    }
    TestDirectory dir_;
};

TEST_F(Kubelet, ListGivesEachContainersGpuDevicesOnly) {
    FakeKubelet kubelet(socket(), node_pods());
    ASSERT_TRUE(kubelet.serving());
    auto allocations = client().gpu_allocations();
    ASSERT_TRUE(allocations) << allocations.error().describe();
    EXPECT_EQ(describe(*allocations),
              "ml/trainer/main: " + kGpu0 + "\n" +          //
                  "ml/mig-job/worker: " + kMig1 + "\n" +    //
                  "serve/replicas/a: " + kGpu1 + "::2\n" +  //
                  "serve/replicas/b: " + kGpu1 + "::3\n");
    EXPECT_EQ(kubelet.calls(), 1);
}

TEST_F(Kubelet, TheAllocationsNameThePodsSeenOnTheGpus) {
    FakeKubelet kubelet(socket(), node_pods());
    auto allocations = client().gpu_allocations();
    ASSERT_TRUE(allocations) << allocations.error().describe();
    attribution::PodNamer namer(
        {{0, kGpu0, "", {}}, {1, kGpu1, "", {}}, {2, "GPU-2b1c2d3e-0000-4000-8000-000000000002", "", {kMig1}}});
    const std::set<attribution::PodSighting> seen{
        {0, kUidA, kContainer1}, {2, kUidB, kContainer2}, {1, kUidC, kContainer3}};
    EXPECT_TRUE(namer.learn(*allocations, seen).empty());
    ASSERT_NE(namer.pod(kUidA), nullptr);
    EXPECT_EQ(namer.pod(kUidA)->pod_namespace + "/" + namer.pod(kUidA)->name, "ml/trainer");
    EXPECT_EQ(*namer.container(kContainer1), "main");
    ASSERT_NE(namer.pod(kUidB), nullptr);
    EXPECT_EQ(namer.pod(kUidB)->name, "mig-job");
    EXPECT_EQ(*namer.container(kContainer2), "worker");
    // One pod holds both of GPU 1's replicas, in two containers: the pod, not which container.
    ASSERT_NE(namer.pod(kUidC), nullptr);
    EXPECT_EQ(namer.pod(kUidC)->name, "replicas");
    EXPECT_EQ(namer.container(kContainer3), nullptr);
}

TEST_F(Kubelet, AnUnknownDeviceIdIsCountedAndLeftOut) {
    FakeKubelet kubelet(socket(), {{"ml", "odd", {{"main", {{"nvidia.com/gpu", {"nvidia0", kGpu0}}}}}}});
    auto allocations = client().gpu_allocations();
    ASSERT_TRUE(allocations) << allocations.error().describe();
    attribution::PodNamer namer({{0, kGpu0, "", {}}});
    const auto errors = namer.learn(*allocations, {{0, kUidA, ""}});
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_NE(errors[0].message.find("nvidia0"), std::string::npos);
    ASSERT_NE(namer.pod(kUidA), nullptr);
    EXPECT_EQ(namer.pod(kUidA)->name, "odd");
}

TEST_F(Kubelet, NoKubeletIsUnavailableAndSaysWhatToMount) {
    auto allocations = client().gpu_allocations();
    ASSERT_FALSE(allocations);
    EXPECT_EQ(allocations.error().code, ErrorCode::Unavailable) << allocations.error().describe();
    EXPECT_NE(allocations.error().message.find(socket().string()), std::string::npos);
    EXPECT_NE(allocations.error().hint.find("/var/lib/kubelet/pod-resources"), std::string::npos);
}

TEST_F(Kubelet, AFileThatIsNoSocketIsUnavailable) {
    std::ofstream(socket()) << "not a socket";
    auto allocations = client().gpu_allocations();
    ASSERT_FALSE(allocations);
    EXPECT_EQ(allocations.error().code, ErrorCode::Unavailable) << allocations.error().describe();
}

TEST_F(Kubelet, AKubeletSlowerThanTheDeadlineIsATimeoutThenAnswersAgain) {
    FakeKubelet kubelet(socket(), node_pods());
    kubelet.delay(10s);  // cut short when the client gives up
    auto resources = client(200ms);
    auto late = resources.gpu_allocations();
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code, ErrorCode::Timeout) << late.error().describe();
    EXPECT_NE(late.error().message.find("200 ms"), std::string::npos) << late.error().message;
    kubelet.delay(0ms);
    auto again = resources.gpu_allocations();
    ASSERT_TRUE(again) << again.error().describe();
    EXPECT_EQ(again->size(), 4U);
}

TEST_F(Kubelet, BytesThatAreNoReplyAreInvalidState) {
    GarbageKubelet kubelet(socket());
    ASSERT_TRUE(kubelet.serving());
    auto allocations = client().gpu_allocations();
    ASSERT_FALSE(allocations);
    EXPECT_EQ(allocations.error().code, ErrorCode::InvalidState) << allocations.error().describe();
}

TEST_F(Kubelet, APodOrContainerWithoutANameIsInvalidState) {
    FakeKubelet kubelet(socket(), {{"ml", "", {{"main", {{"nvidia.com/gpu", {kGpu0}}}}}}});
    auto no_pod_name = client().gpu_allocations();
    ASSERT_FALSE(no_pod_name);
    EXPECT_EQ(no_pod_name.error().code, ErrorCode::InvalidState) << no_pod_name.error().describe();
    kubelet.reply({{"ml", "trainer", {{"", {{"nvidia.com/gpu", {kGpu0}}}}}}});
    auto no_container_name = client().gpu_allocations();
    ASSERT_FALSE(no_container_name);
    EXPECT_EQ(no_container_name.error().code, ErrorCode::InvalidState) << no_container_name.error().describe();
}

// The exporter keeps one client: a kubelet that comes up (or back) after it
// is found again without a restart.
TEST_F(Kubelet, AKubeletThatStartsLaterIsFoundByTheSameClient) {
    auto resources = client(200ms);
    ASSERT_FALSE(resources.gpu_allocations());
    FakeKubelet kubelet(socket(), node_pods());
    Result<std::vector<ContainerAllocation>> allocations = resources.gpu_allocations();
    // The channel retries on its backoff (at most 5 s apart): a bounded wait, not a timing assert.
    for (int i = 0; i < 150 && !allocations; ++i) {
        std::this_thread::sleep_for(100ms);
        allocations = resources.gpu_allocations();
    }
    ASSERT_TRUE(allocations) << allocations.error().describe();
    EXPECT_EQ(allocations->size(), 4U);
}

}  // namespace
}  // namespace zeus::testing
