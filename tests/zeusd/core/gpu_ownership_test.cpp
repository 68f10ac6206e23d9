// --control-policy owner's decision for one GPU, over a fake GPU whose
// driver lists scripted processes and a fake /proc that says who runs them:
// idle and own GPUs are allowed; another user's process, a process that
// ended mid-check, an unreadable status and a driver error refuse, each
// with a message naming the GPU, the processes and the fix, and counted.
#include "zeusd/gpu_ownership.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "support/fake_proc.hpp"
#include "support/test_directory.hpp"
#include "zeus/device/gpu_processes.hpp"

namespace zeus::zeusd {
namespace {

using Outcome = OwnershipCheck::Outcome;

// A fake GPU with the driver's process list.
class ProcessListingGpu : public zeus::testing::FakeGpu, public GpuProcessQuery {
  public:
    std::vector<GpuProcess> processes;
    std::optional<Error> driver_error;

    Result<std::vector<GpuProcess>> running_compute_processes() const override {
        if (driver_error) return *driver_error;
        return processes;
    }
    Result<ProcessUtilizationSamples> process_utilization(std::uint64_t) const override {
        return Error{ErrorCode::NotSupported, "not scripted", {}};
    }
};

constexpr std::uint32_t kAlice = 4000001;
constexpr std::uint32_t kBob = 4000002;

class GpuOwnershipTest : public ::testing::Test {
  protected:
    zeus::testing::TestDirectory dir;
    zeus::testing::FakeProcTree proc{dir.path() / "proc"};
    ProcessListingGpu gpu;
    GpuOwnership ownership{proc.root()};

    void run(std::uint32_t pid, std::uint32_t uid) {
        proc.add_user_process(pid, uid);
        gpu.processes.push_back({pid, 0});
    }
};

TEST_F(GpuOwnershipTest, AnIdleGpuIsAllowedForAnyone) {
    EXPECT_EQ(ownership.check(gpu, 0, kAlice).outcome, Outcome::Idle);
    EXPECT_EQ(ownership.check(gpu, 0, std::nullopt).outcome, Outcome::Idle);
}

TEST_F(GpuOwnershipTest, OnlyTheClientsOwnProcessesAreAllowed) {
    run(100, kAlice);
    run(101, kAlice);
    EXPECT_EQ(ownership.check(gpu, 0, kAlice).outcome, Outcome::OwnProcesses);
    // Root gets no exception, and nobody (a TCP client without a local user) owns nothing.
    EXPECT_EQ(ownership.check(gpu, 0, 0).outcome, Outcome::OtherUsers);
    EXPECT_EQ(ownership.check(gpu, 0, std::nullopt).outcome, Outcome::OtherUsers);
}

TEST_F(GpuOwnershipTest, AnotherUsersProcessRefusesAndIsNamedWithTheFix) {
    run(100, kAlice);
    run(200, kBob);
    const auto check = ownership.check(gpu, 3, kAlice);
    EXPECT_FALSE(check.allowed());
    ASSERT_EQ(check.outcome, Outcome::OtherUsers);
    ASSERT_EQ(check.others.size(), 1U);
    EXPECT_EQ(check.others[0].pid, 200U);
    EXPECT_EQ(check.others[0].uid, kBob);
    const std::string message = refusal_message(3, check, kAlice);
    EXPECT_NE(message.find("GPU 3 is in use by another user's process: pid 200 (uid 4000002)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("your processes (uid 4000001)"), std::string::npos) << message;
    EXPECT_NE(message.find("Wait until those processes end"), std::string::npos) << message;
}

// A TCP client whose token names a user with no account here is told so,
// not that it has no token.
TEST_F(GpuOwnershipTest, ATokenUserWithoutALocalAccountIsNamed) {
    run(200, kBob);
    const auto check = ownership.check(gpu, 0, std::nullopt);
    ASSERT_EQ(check.outcome, Outcome::OtherUsers);
    const std::string message = refusal_message(0, check, std::nullopt, "carol");
    EXPECT_NE(message.find("your token names user 'carol', who has no account on this host"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("without a token"), std::string::npos) << message;
    EXPECT_NE(refusal_message(0, check, std::nullopt).find("without a token"), std::string::npos);
}

TEST_F(GpuOwnershipTest, AUserWithANameIsNamed) {
    run(300, 0);
    const auto check = ownership.check(gpu, 0, kAlice);
    ASSERT_EQ(check.outcome, Outcome::OtherUsers);
    EXPECT_EQ(check.others[0].user, "root");
    EXPECT_NE(refusal_message(0, check, kAlice).find("pid 300 (user root, uid 0)"), std::string::npos);
}

TEST_F(GpuOwnershipTest, AProcessThatEndedMidCheckRefuses) {
    run(100, kAlice);
    gpu.processes.push_back({999, 0});  // listed by the driver, gone from /proc
    const auto check = ownership.check(gpu, 1, kAlice);
    ASSERT_EQ(check.outcome, Outcome::Unverifiable);
    EXPECT_NE(check.reason.find("process 999 on GPU 1 ended"), std::string::npos) << check.reason;
    // An operator whose --proc is no /proc sees it named.
    EXPECT_NE(check.reason.find("or --proc " + proc.root().string() + " is not the host's /proc"), std::string::npos)
        << check.reason;
    const std::string message = refusal_message(1, check, kAlice);
    EXPECT_NE(message.find("GPU 1 was not changed"), std::string::npos) << message;
    EXPECT_NE(message.find("Retry the request"), std::string::npos) << message;
}

TEST_F(GpuOwnershipTest, AStatusWithoutAUidRefusesEvenInTheClientsSlice) {
    // The slice says alice; only the status may say who runs it.
    proc.add(100, "0::/user.slice/user-4000001.slice/session-1.scope\n", "Name:\tpython\n");
    gpu.processes.push_back({100, 0});
    const auto check = ownership.check(gpu, 0, kAlice);
    ASSERT_EQ(check.outcome, Outcome::Unverifiable);
    EXPECT_NE(check.reason.find("cannot tell who runs process 100 on GPU 0"), std::string::npos) << check.reason;
    EXPECT_NE(check.reason.find("has no Uid line"), std::string::npos) << check.reason;
}

TEST_F(GpuOwnershipTest, AnUnreadableStatusRefuses) {
    // A directory where the file should be: unreadable as a file even for root.
    std::filesystem::create_directories(proc.root() / "100" / "status");
    gpu.processes.push_back({100, 0});
    const auto check = ownership.check(gpu, 0, kAlice);
    ASSERT_EQ(check.outcome, Outcome::Unverifiable);
    EXPECT_NE(check.reason.find("100/status"), std::string::npos) << check.reason;
}

TEST_F(GpuOwnershipTest, ADriverErrorRefuses) {
    gpu.driver_error = Error{ErrorCode::Unknown, "NVML: GPU is lost", {}};
    const auto check = ownership.check(gpu, 2, kAlice);
    ASSERT_EQ(check.outcome, Outcome::Unverifiable);
    EXPECT_NE(check.reason.find("the driver could not list GPU 2's processes: NVML: GPU is lost"), std::string::npos)
        << check.reason;
}

TEST_F(GpuOwnershipTest, AGpuWithoutAProcessListRefuses) {
    zeus::testing::FakeGpu blind;
    const auto check = ownership.check(blind, 0, kAlice);
    ASSERT_EQ(check.outcome, Outcome::Unverifiable);
    EXPECT_NE(check.reason.find("no per-process data"), std::string::npos) << check.reason;
}

TEST_F(GpuOwnershipTest, AnotherUsersProcessOutweighsAnUncheckableOne) {
    gpu.processes.push_back({999, 0});
    run(200, kBob);
    EXPECT_EQ(ownership.check(gpu, 0, kAlice).outcome, Outcome::OtherUsers);
}

TEST_F(GpuOwnershipTest, EveryOutcomeIsCounted) {
    (void)ownership.check(gpu, 0, kAlice);  // idle
    run(100, kAlice);
    (void)ownership.check(gpu, 0, kAlice);  // own
    (void)ownership.check(gpu, 0, kBob);    // other
    (void)ownership.check(gpu, 0, kBob);    // other
    gpu.driver_error = Error{ErrorCode::Unknown, "lost", {}};
    (void)ownership.check(gpu, 0, kAlice);  // unverifiable
    const std::array<std::uint64_t, 4> expected = {1, 1, 2, 1};
    EXPECT_EQ(ownership.counts(), expected);
}

TEST(ControlPolicy, ParsesTheTwoNamesAndNamesTheFlagOtherwise) {
    EXPECT_EQ(parse_control_policy("any").value(), ControlPolicy::Any);
    EXPECT_EQ(parse_control_policy("owner").value(), ControlPolicy::Owner);
    const auto bad = parse_control_policy("owners");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("--control-policy: unknown policy 'owners'"), std::string::npos);
}

}  // namespace
}  // namespace zeus::zeusd
