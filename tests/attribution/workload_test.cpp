// Process → workload over fake /proc trees built from the cgroup paths real
// hosts write: kubelet with the systemd and cgroupfs drivers, cgroup v1 and
// v2, Docker, containerd, CRI-O, Podman, Slurm, user slices, and nested
// (kind) layouts; and the bad inputs (a process that ended, an unreadable or
// malformed cgroup file), each an Error naming the file, never a crash.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "support/fake_proc.hpp"
#include "support/test_directory.hpp"
#include "zeus/attribution/workload.hpp"

namespace zeus::attribution {
namespace {

const std::string kId = "3b8f2a1c9d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";  // 64 hex
const std::string kPod = "4f1b3a8e-9c7d-4e2a-8b1f-2a3c4d5e6f70";
const std::string kPodSystemd = "4f1b3a8e_9c7d_4e2a_8b1f_2a3c4d5e6f70";

struct Case {
    const char* name;
    std::string cgroup_file;
    std::string container_id, runtime, pod_uid, slurm_job, slurm_step;
    std::optional<std::uint32_t> slice_uid;
};

std::vector<Case> cases() {
    return {
        {"v2 systemd kubelet containerd, burstable",
         "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodSystemd + ".slice/cri-containerd-" +
             kId + ".scope\n",
         kId, "containerd", kPod, "", "", std::nullopt},
        {"v2 systemd kubelet CRI-O, guaranteed",
         "0::/kubepods.slice/kubepods-pod" + kPodSystemd + ".slice/crio-" + kId + ".scope\n", kId, "cri-o", kPod, "",
         "", std::nullopt},
        {"v2 systemd kubelet CRI-O besteffort",
         "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kPodSystemd + ".slice/crio-" + kId +
             ".scope\n",
         kId, "cri-o", kPod, "", "", std::nullopt},
        {"v1 cgroupfs kubelet docker (hybrid: unified line is /)",
         "12:memory:/kubepods/burstable/pod" + kPod + "/" + kId + "\n11:cpu,cpuacct:/kubepods/burstable/pod" + kPod +
             "/" + kId + "\n1:name=systemd:/kubepods/burstable/pod" + kPod + "/" + kId + "\n0::/\n",
         kId, "", kPod, "", "", std::nullopt},
        {"v1 cgroupfs kubelet guaranteed", "4:memory:/kubepods/pod" + kPod + "/" + kId + "\n", kId, "", kPod, "", "",
         std::nullopt},
        {"v2 standalone docker, systemd", "0::/system.slice/docker-" + kId + ".scope\n", kId, "docker", "", "", "",
         std::nullopt},
        {"v1 standalone docker, cgroupfs", "12:cpu,cpuacct:/docker/" + kId + "\n9:memory:/docker/" + kId + "\n", kId,
         "", "", "", "", std::nullopt},
        {"rootless podman under a user slice",
         "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + kId + ".scope/container\n", kId,
         "podman", "", "", "", 1000u},
        {"nested: kind node (docker) running a kubelet with cgroupfs (kepler#923)",
         "0::/system.slice/docker-" + std::string(64, 'a') + ".scope/kubelet/kubepods/besteffort/pod" + kPod + "/" +
             kId + "\n",
         kId, "", kPod, "", "", std::nullopt},
        {"nested: kind node with the systemd driver",
         "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
         "kubelet-kubepods-besteffort-pod" +
             kPodSystemd + ".slice/cri-containerd-" + kId + ".scope\n",
         kId, "containerd", kPod, "", "", std::nullopt},
        {"pod sandbox level only (no container segment)",
         "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodSystemd + ".slice\n", "", "", kPod,
         "", "", std::nullopt},
        {"Slurm, cgroup v2", "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n", "", "", "", "1234", "0",
         std::nullopt},
        {"Slurm batch step, cgroup v1", "7:memory:/slurm/uid_1000/job_987/step_batch/task_0\n", "", "", "", "987",
         "batch", 1000u},
        {"user session", "0::/user.slice/user-1000.slice/session-3.scope\n", "", "", "", "", "", 1000u},
        {"system service", "0::/system.slice/nvidia-persistenced.service\n", "", "", "", "", "", std::nullopt},
        {"CRI-O's conmon is no container",
         "0::/kubepods.slice/kubepods-pod" + kPodSystemd + ".slice/crio-conmon-" + kId + ".scope\n", "", "", kPod, "",
         "", std::nullopt},
    };
}

TEST(CgroupPath, EachRealLayoutGivesItsContainerPodJobAndUser) {
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        const auto path = cgroup_path_of(c.cgroup_file);
        ASSERT_TRUE(path.ok()) << path.error().message;
        const CgroupWorkload w = parse_cgroup_path(*path);
        EXPECT_EQ(w.container_id, c.container_id);
        EXPECT_EQ(w.container_runtime, c.runtime);
        EXPECT_EQ(w.pod_uid, c.pod_uid);
        EXPECT_EQ(w.slurm_job, c.slurm_job);
        EXPECT_EQ(w.slurm_step, c.slurm_step);
        EXPECT_EQ(w.slice_uid, c.slice_uid);
    }
}

TEST(CgroupPath, MalformedFileHasNoPath) {
    EXPECT_FALSE(cgroup_path_of("").ok());
    EXPECT_FALSE(cgroup_path_of("garbage without colons\n\xff\xfe\n").ok());
}

TEST(CgroupPath, ShortOrNonHexIdsAreNotContainers) {
    EXPECT_EQ(parse_cgroup_path("/docker/abc123").container_id, "");
    EXPECT_EQ(parse_cgroup_path("/system.slice/docker-" + std::string(64, 'g') + ".scope").container_id, "");
    EXPECT_EQ(parse_cgroup_path("/kubepods/podnot-a-uid/" + kId).pod_uid, "");
}

class FakeProc : public ::testing::Test {
  protected:
    zeus::testing::TestDirectory dir;
    zeus::testing::FakeProcTree proc{dir.path()};
    void add(std::uint32_t pid, const std::string& cgroup, const std::optional<std::string>& status) {
        proc.add(pid, cgroup, status);
    }
};

TEST_F(FakeProc, ResolvesAKubernetesContainerAndTheUserFromTheRealUid) {
    add(4242, cases()[0].cgroup_file, "Name:\tpython\nUmask:\t0022\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
    const auto w = WorkloadResolver(dir.path()).resolve(4242);
    ASSERT_TRUE(w.ok()) << w.error().message;
    EXPECT_EQ(w->pid, 4242u);
    EXPECT_EQ(w->container_id, kId);
    EXPECT_EQ(w->container_runtime, "containerd");
    EXPECT_EQ(w->pod_uid, kPod);
    EXPECT_EQ(w->uid, 0u);
    EXPECT_EQ(w->user, "root");
    // Each missing level says why.
    ASSERT_EQ(w->unavailable.size(), 1u);
    EXPECT_NE(w->unavailable[0].find("slurm_job"), std::string::npos);
}

TEST_F(FakeProc, UserFromTheSliceWhenStatusIsMissingAndNumericWithoutAName) {
    add(10, "0::/user.slice/user-4000000.slice/session-9.scope\n", std::nullopt);
    const auto w = WorkloadResolver(dir.path()).resolve(10);
    ASSERT_TRUE(w.ok()) << w.error().message;
    EXPECT_EQ(w->uid, 4000000u);
    EXPECT_EQ(w->user, "4000000");
}

TEST_F(FakeProc, NoUserAnywhereSaysSo) {
    add(11, "0::/system.slice/foo.service\n", "Name:\tfoo\n");
    const auto w = WorkloadResolver(dir.path()).resolve(11);
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE(w->uid.has_value());
    EXPECT_TRUE(std::any_of(w->unavailable.begin(), w->unavailable.end(),
                            [](const std::string& line) { return line.starts_with("user: "); }));
}

TEST_F(FakeProc, AProcessThatEndedIsNotFound) {
    const auto w = WorkloadResolver(dir.path()).resolve(999999);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().code, ErrorCode::NotFound);
    EXPECT_NE(w.error().message.find("999999"), std::string::npos);
}

TEST_F(FakeProc, AnUnreadableCgroupFileIsAnErrorNamingIt) {
    if (::geteuid() == 0) {
        // Root reads a mode-000 file anyway: make it a directory instead, which no one can read as a file.
        std::filesystem::create_directories(dir.path() / "12" / "cgroup");
    } else {
        add(12, "0::/x\n", std::nullopt);
        ::chmod((dir.path() / "12" / "cgroup").c_str(), 0);
    }
    const auto w = WorkloadResolver(dir.path()).resolve(12);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.error().message.find("cgroup"), std::string::npos);
}

TEST_F(FakeProc, AMalformedCgroupFileIsAnErrorNamingIt) {
    add(13, "nonsense\n", std::nullopt);
    const auto w = WorkloadResolver(dir.path()).resolve(13);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.error().message.find("13/cgroup is malformed"), std::string::npos);
}

TEST_F(FakeProc, OwnerIsTheRealUidFromStatus) {
    add(20, "0::/user.slice/user-1000.slice/session-3.scope\n", "Name:\tx\nUid:\t4000000\t0\t0\t0\n");
    const auto owner = WorkloadResolver(dir.path()).owner(20);
    ASSERT_TRUE(owner.ok()) << owner.error().message;
    EXPECT_EQ(owner->uid, 4000000u);
    EXPECT_EQ(owner->user, "4000000");
}

TEST_F(FakeProc, OwnerIsNeverTakenFromTheCgroupPath) {
    // sudo in alice's session: the slice names alice, the process is root's;
    // without a readable status the owner is unknown, not alice.
    add(21, "0::/user.slice/user-1000.slice/session-3.scope\n", std::nullopt);
    const auto no_status = WorkloadResolver(dir.path()).owner(21);
    ASSERT_FALSE(no_status.ok());
    EXPECT_EQ(no_status.error().code, ErrorCode::NotFound);
    add(22, "0::/user.slice/user-1000.slice/session-3.scope\n", "Name:\tx\n");
    const auto no_uid_line = WorkloadResolver(dir.path()).owner(22);
    ASSERT_FALSE(no_uid_line.ok());
    EXPECT_EQ(no_uid_line.error().code, ErrorCode::InvalidState);
    EXPECT_NE(no_uid_line.error().message.find("22/status has no Uid line"), std::string::npos);
}

}  // namespace
}  // namespace zeus::attribution
