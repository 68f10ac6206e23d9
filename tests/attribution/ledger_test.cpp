// The ledger over the engine and a fake /proc: every millijoule of the GPU's
// counter lands in one workload or one remainder reason after every pass,
// workloads resolve to their most specific level, processes that cannot be
// read are a labelled remainder and an error, and ended workloads expire
// into the "expired" remainder without breaking the identity.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>

#include "scripted_process_source.hpp"
#include "support/test_directory.hpp"
#include "zeus/attribution/ledger.hpp"

namespace zeus::attribution {
namespace {

using testing::ScriptedProcessSource;
using Clock = std::chrono::steady_clock;

const std::string kId = "3b8f2a1c9d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";

class LedgerTest : public ::testing::Test {
  protected:
    zeus::testing::TestDirectory dir;
    void add_process(std::uint32_t pid, const std::string& cgroup) {
        std::filesystem::create_directories(dir.path() / std::to_string(pid));
        std::ofstream(dir.path() / std::to_string(pid) / "cgroup") << cgroup;
        std::ofstream(dir.path() / std::to_string(pid) / "status") << "Uid:\t0\t0\t0\t0\n";
    }
};

TEST_F(LedgerTest, EveryMillijouleOfTheCounterIsAccountedForAfterEveryPass) {
    add_process(100, "0::/kubepods.slice/kubepods-pod4f1b3a8e_9c7d_4e2a_8b1f_2a3c4d5e6f70.slice/cri-containerd-" + kId +
                         ".scope\n");
    add_process(200, "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n");
    add_process(300, "0::/user.slice/user-0.slice/session-1.scope\n");
    // 400 has no /proc entry: it ended, or the exporter cannot see it.
    WorkloadResolver resolver(dir.path());
    WorkloadLedger ledger(resolver, std::chrono::minutes(5));
    ScriptedProcessSource source;
    AttributorOptions options;
    options.idle_power = {Milliwatts(40'000), Milliwatts(40'000)};
    Attributor attributor(source, options);
    std::mt19937_64 rng(3);
    auto now = Clock::time_point{} + std::chrono::hours(1);
    std::vector<std::int64_t> counter = {7'000'000, 123};
    std::uint64_t ts = 1;
    std::size_t unresolved_errors = 0;
    for (int pass = 0; pass < 400; ++pass) {
        now += std::chrono::milliseconds(1000);
        for (std::size_t gpu = 0; gpu < 2; ++gpu) {
            if (pass > 0) counter[gpu] += std::uniform_int_distribution<std::int64_t>(0, 400'000)(rng);
            source.running[gpu].clear();
            for (std::uint32_t pid : {100u, 200u, 300u, 400u}) {
                if (rng() % 2) continue;
                source.running[gpu].push_back({pid, 0});
                source.buffer[gpu].push_back({pid, ts++, static_cast<std::uint32_t>(rng() % 100)});
            }
            const auto interval = attributor.step(gpu, Millijoules(counter[gpu]), now);
            for (const Error& e : ledger.add(interval, counter[gpu], now))
                unresolved_errors += e.code == ErrorCode::NotFound;
            ASSERT_EQ(ledger.accounted_mj(gpu), counter[gpu]) << "pass " << pass << " GPU " << gpu;
        }
        ledger.end_pass(now);
    }
    EXPECT_GT(unresolved_errors, 0u);
    EXPECT_GT(ledger.remainder_mj(0, RemainderReason::Unresolved), 0);
    EXPECT_EQ(ledger.remainder_mj(0, RemainderReason::BeforeStart), 7'000'000);
    EXPECT_GT(ledger.remainder_mj(0, RemainderReason::Idle), 0);
    std::set<std::string> kinds;
    for (const auto& [key, total] : ledger.workloads()) {
        kinds.insert(key.kind);
        if (key.kind == "container") {
            EXPECT_EQ(key.container_id, kId);
            EXPECT_EQ(key.pod_uid, "4f1b3a8e-9c7d-4e2a-8b1f-2a3c4d5e6f70");
        }
        if (key.kind == "slurm_job") {
            EXPECT_EQ(key.slurm_job, "77");
        }
        if (key.kind == "user") {
            EXPECT_EQ(key.user, "root");
        }
    }
    EXPECT_EQ(kinds, (std::set<std::string>{"container", "slurm_job", "user"}));
}

TEST_F(LedgerTest, EndedWorkloadsExpireIntoTheExpiredRemainder) {
    add_process(100, "0::/system.slice/docker-" + kId + ".scope\n");
    WorkloadResolver resolver(dir.path());
    WorkloadLedger ledger(resolver, std::chrono::seconds(30));
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    auto now = Clock::time_point{} + std::chrono::hours(1);
    (void)ledger.add(attributor.step(0, Millijoules(0), now), 0, now);
    source.running[0] = {{100, 0}};
    now += std::chrono::seconds(1);
    (void)ledger.add(attributor.step(0, Millijoules(5000), now), 5000, now);
    ASSERT_EQ(ledger.workloads().size(), 1u);
    EXPECT_EQ(ledger.workloads().begin()->second.energy_mj, 5000);
    EXPECT_EQ(ledger.workloads().begin()->first.kind, "container");
    source.running[0].clear();
    ledger.end_pass(now + std::chrono::seconds(29));
    EXPECT_EQ(ledger.workloads().size(), 1u) << "not yet";
    now += std::chrono::seconds(31);
    (void)ledger.add(attributor.step(0, Millijoules(6000), now), 6000, now);
    ledger.end_pass(now);
    EXPECT_TRUE(ledger.workloads().empty());
    EXPECT_EQ(ledger.remainder_mj(0, RemainderReason::Expired), 5000);
    EXPECT_EQ(ledger.accounted_mj(0), 6000);
}

// IdlePolicy::ByAllocation with a GPU allocated whole to one container: what
// no process is charged with (idle, no process) is the holder's; without a
// holder (the kubelet down) it is the remainder's again.
TEST_F(LedgerTest, AGpusHolderGetsTheEnergyNoProcessIsChargedWith) {
    add_process(100, "0::/system.slice/docker-" + kId + ".scope\n");
    WorkloadResolver resolver(dir.path());
    WorkloadLedger ledger(resolver, std::chrono::minutes(5));
    ScriptedProcessSource source;
    AttributorOptions options;
    options.idle_policy = IdlePolicy::ByAllocation;
    options.idle_power = {Milliwatts(40'000)};
    Attributor attributor(source, options);
    const GpuHolder holder{{"ml", "train"}, "trainer", ""};
    auto now = Clock::time_point{} + std::chrono::hours(1);
    std::int64_t counter = 0;
    auto pass = [&](std::int64_t delta_mj, const GpuHolder* with) {
        now += std::chrono::seconds(1);
        counter += delta_mj;
        EXPECT_TRUE(ledger.add(attributor.step(0, Millijoules(counter), now), counter, now, with).empty());
        EXPECT_EQ(ledger.accounted_mj(0), counter);
        ledger.end_pass(now);
    };
    pass(0, &holder);  // the baseline
    const WorkloadKey key = holder_key(0, holder);
    EXPECT_FALSE(ledger.workloads().contains(key)) << "a series only once it has energy";
    pass(100'000, &holder);  // no process: 40 J idle (40 W × 1 s) and 60 J above it, all the holder's
    EXPECT_EQ(key.kind, "pod");
    EXPECT_EQ(key.method, Method::Allocation);
    ASSERT_TRUE(ledger.workloads().contains(key));
    EXPECT_EQ(ledger.workloads().at(key).energy_mj, 100'000);
    EXPECT_EQ(ledger.remainder_mj(0, RemainderReason::Idle) + ledger.remainder_mj(0, RemainderReason::NoProcess), 0);

    source.running[0] = {{100, 0}};
    pass(70'000, &holder);  // its process: all of it, idle included (ByAllocation); nothing left for the holder
    EXPECT_EQ(ledger.workloads().at(key).energy_mj, 100'000);
    source.running[0].clear();
    pass(50'000, nullptr);  // no holder known: the remainder's
    EXPECT_EQ(ledger.workloads().at(key).energy_mj, 100'000);
    EXPECT_EQ(ledger.remainder_mj(0, RemainderReason::Idle), 40'000);
    EXPECT_EQ(ledger.remainder_mj(0, RemainderReason::NoProcess), 10'000);
}

TEST_F(LedgerTest, AProcessIsReadOncePerLifeAndAReusedPidIsReadAgain) {
    add_process(100, "0::/system.slice/docker-" + kId + ".scope\n");
    WorkloadResolver resolver(dir.path());
    WorkloadLedger ledger(resolver, std::chrono::minutes(5));
    ScriptedProcessSource source;
    Attributor attributor(source, {});
    auto now = Clock::time_point{} + std::chrono::hours(1);
    std::int64_t counter = 0;
    // Two GPUs, the process on GPU 0 only: a pass is a sweep over both.
    const auto pass = [&] {
        now += std::chrono::seconds(1);
        counter += 1000;
        for (std::size_t gpu = 0; gpu < 2; ++gpu) {
            (void)ledger.add(attributor.step(gpu, Millijoules(counter), now), counter, now);
        }
        ledger.end_pass(now);
    };
    pass();
    source.running[0] = {{100, 0}};
    pass();
    // Its cgroup changes while it runs (it cannot, but the cache must be what
    // answers: /proc is read once per process, not once per GPU or pass).
    add_process(100, "0::/user.slice/user-0.slice/session-1.scope\n");
    pass();
    ASSERT_EQ(ledger.workloads().size(), 1u);
    EXPECT_EQ(ledger.workloads().begin()->first.kind, "container");
    // It ends; the PID comes back as another process: read again.
    source.running[0].clear();
    pass();
    source.running[0] = {{100, 0}};
    pass();
    std::set<std::string> kinds;
    for (const auto& [key, total] : ledger.workloads()) kinds.insert(key.kind);
    EXPECT_EQ(kinds, (std::set<std::string>{"container", "user"}));
    EXPECT_EQ(ledger.accounted_mj(0), counter);
}

TEST(WorkloadKey, TheMostSpecificLevelNamesTheKind) {
    Workload w;
    w.pid = 9;
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).kind, "process");
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).pid, "9");
    w.user = "alice";
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).kind, "user");
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).pid, "");
    w.slurm_job = "5";
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).kind, "slurm_job");
    w.pod_uid = "u";
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).kind, "pod");
    w.container_id = kId;
    EXPECT_EQ(workload_key(0, w, Method::Exclusive).kind, "container");
}

}  // namespace
}  // namespace zeus::attribution
