// GPU control through the daemon: settings applied and read back, errors per
// GPU, and the safety net: whatever a client changed is put back when its
// process ends (kill -9 included) or the daemon stops, unless it asked to
// keep it.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include <fmt/format.h>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

std::int64_t limit_of(unsigned gpu) { return ZeusdTest::local_gpus()[gpu].power_limit().value().count(); }

// A client process that makes one request, reports its status on a pipe and
// then waits to be killed.
class ClientProcess {
  public:
    ClientProcess(const Endpoint& endpoint, const std::string& target) {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(fds[0]);
            int status = 0;
            try {
                status = http_request(endpoint, "POST", target).status;
            } catch (...) {
                status = -1;
            }
            const auto written = ::write(fds[1], &status, sizeof status);
            (void)written;
            while (true) ::pause();
        }
        ::close(fds[1]);
        const auto got = ::read(fds[0], &status_, sizeof status_);
        ::close(fds[0]);
        if (got != static_cast<ssize_t>(sizeof status_)) status_ = -2;
    }
    ~ClientProcess() { kill9(); }
    void kill9() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    [[nodiscard]] int status() const { return status_; }

  private:
    pid_t pid_ = -1;
    int status_ = 0;
};

std::int64_t a_valid_limit_other_than_current(unsigned gpu) {
    const auto gpus = ZeusdTest::local_gpus();
    const auto range = gpus[gpu].power_limit_constraints().value();
    const auto current = gpus[gpu].power_limit().value().count();
    const auto middle = (range.min.count() + range.max.count()) / 2;
    return middle == current ? middle + 1000 : middle;
}

TEST_F(ZeusdTest, SetPowerLimitIsAppliedToTheRequestedGpusOnly) {
    start();
    const auto target = a_valid_limit_other_than_current(1);
    const auto before0 = limit_of(0);
    const auto reply = post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=" + std::to_string(target) +
                            "&block=true&persist=true");
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.body, "");
    EXPECT_EQ(limit_of(1), target);
    EXPECT_EQ(limit_of(0), before0);
}

TEST_F(ZeusdTest, NonBlockingControlAnswersAtOnceAndAppliesSoonAfter) {
    start();
    const auto target = a_valid_limit_other_than_current(0);
    const auto reply = post("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=" + std::to_string(target) +
                            "&block=false&persist=true");
    ASSERT_EQ(reply.status, 200) << reply.body;
    EXPECT_TRUE(eventually([&] { return limit_of(0) == target && limit_of(1) == target; }));
}

TEST_F(ZeusdTest, DeviceErrorsAreReportedPerGpuWithTheirStatus) {
    start();
    const auto range = local_gpus()[0].power_limit_constraints().value();
    const auto too_low = range.min.count() - 1000;
    const auto reply =
        post("/gpu/set_power_limit?gpu_ids=0,1&power_limit_mw=" + std::to_string(too_low) + "&block=true");
    EXPECT_EQ(reply.status, 400) << reply.body;
    const auto errors = json_of(reply)["errors"];
    EXPECT_EQ(errors.size(), 2U) << reply.body;
    EXPECT_TRUE(errors["0"].is_string() && errors["1"].is_string()) << reply.body;
}

TEST_F(ZeusdTest, ClocksAndPersistenceRoutesReachTheGpu) {
    start();
    const auto gpus = local_gpus();
    const auto memory = gpus[0].supported_memory_clocks().value();
    ASSERT_FALSE(memory.empty());
    const auto graphics = gpus[0].supported_graphics_clocks(memory.front()).value();
    ASSERT_FALSE(graphics.empty());
    const auto low = std::to_string(graphics.back().count());
    const auto high = std::to_string(graphics.front().count());
    for (const std::string& target : std::vector<std::string>{
             "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=" + low + "&max_clock_mhz=" + high + "&block=true",
          "/gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true",
          "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=" + std::to_string(memory.back().count()) +
              "&max_clock_mhz=" + std::to_string(memory.front().count()) + "&block=true",
          "/gpu/reset_mem_locked_clocks?gpu_ids=0&block=true", std::string("/gpu/reset_locked_clocks?gpu_ids=0,1&block=true")}) {
        const auto reply = post(target);
        EXPECT_EQ(reply.status, 200) << target << ": " << reply.body;
    }
    const bool mode = gpus[0].persistence_mode().value();
    const auto reply = post(std::string("/gpu/set_persistence_mode?gpu_ids=0&enabled=") + (mode ? "false" : "true") +
                            "&block=true&persist=true");
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(local_gpus()[0].persistence_mode().value(), !mode);
    EXPECT_EQ(json_of(get("/gpu/get_persistence_mode?gpu_ids=0"))["0"]["enabled"], !mode);
}

TEST_F(ZeusdTest, AKilledClientsPowerLimitIsRestored) {
    start();
    const auto baseline = limit_of(0);
    const auto target = a_valid_limit_other_than_current(0);
    ClientProcess client(endpoint_, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + std::to_string(target) +
                                        "&block=true");
    ASSERT_EQ(client.status(), 200) << log();
    EXPECT_EQ(limit_of(0), target);  // holds while the client lives
    ::usleep(200000);
    EXPECT_EQ(limit_of(0), target);
    client.kill9();
    EXPECT_TRUE(eventually([&] { return limit_of(0) == baseline; })) << log();
    EXPECT_NE(log().find("restored GPU 0 with set_power_limit"), std::string::npos) << log();
}

// zeusd in a pod without hostPID: a client in another pod has pid 0 there
// (SO_PEERCRED), yet its changes are still undone when it exits.
TEST_F(ZeusdTest, AClientInAnotherPidNamespaceIsRestoredWhenItExits) {
    start_in_own_pid_namespace();
    const auto baseline = limit_of(0);
    const auto target = a_valid_limit_other_than_current(0);
    const std::string change =
        "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + std::to_string(target) + "&block=true";
    ClientProcess client(endpoint_, change);
    ASSERT_EQ(client.status(), 200) << log();
    EXPECT_EQ(limit_of(0), target);
    // The test process itself is another client of the same namespace: its
    // answer names it, and its change is not undone by the first client's exit.
    const auto answer =
        post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=" + std::to_string(a_valid_limit_other_than_current(1)) +
             "&block=true");
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_NE(answer.headers.at("zeusd-restore").find("of another PID namespace"), std::string::npos)
        << answer.headers.at("zeusd-restore");
    const auto mine = limit_of(1);
    client.kill9();
    EXPECT_TRUE(eventually([&] { return limit_of(0) == baseline; })) << log();
    EXPECT_NE(log().find("(of another PID namespace) is gone"), std::string::npos) << log();
    EXPECT_EQ(limit_of(1), mine);
}

TEST_F(ZeusdTest, TheFirstValueIsRestoredAfterSeveralChangesByTheSameClient) {
    start();
    const auto baseline = limit_of(0);
    const auto range = local_gpus()[0].power_limit_constraints().value();
    // Two changes from one process: this test's own (it stays alive), so
    // use a child that makes both through one fork.
    const pid_t child = ::fork();
    if (child == 0) {
        const auto a = http_request(endpoint_, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" +
                                                           std::to_string(range.min.count()) + "&block=true");
        const auto b = http_request(endpoint_, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" +
                                                           std::to_string(range.min.count() + 1000) + "&block=true");
        ::_exit(a.status == 200 && b.status == 200 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log();
    EXPECT_TRUE(eventually([&] { return limit_of(0) == baseline; })) << log();
}

TEST_F(ZeusdTest, PersistedChangesOutliveTheirClient) {
    start();
    const auto target = a_valid_limit_other_than_current(0);
    ClientProcess client(endpoint_, "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + std::to_string(target) +
                                        "&block=true&persist=true");
    ASSERT_EQ(client.status(), 200);
    client.kill9();
    ::usleep(300000);
    EXPECT_EQ(limit_of(0), target);
}

TEST_F(ZeusdTest, StoppingTheDaemonRestoresWhatLiveClientsChanged) {
    start();
    const auto baseline = limit_of(1);
    const auto target = a_valid_limit_other_than_current(1);
    // This test process is the client, and it stays alive.
    ASSERT_EQ(post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=" + std::to_string(target) + "&block=true").status,
              200);
    EXPECT_EQ(limit_of(1), target);
    EXPECT_EQ(daemon_->stop(), 0);
    EXPECT_EQ(limit_of(1), baseline);
}

TEST_F(ZeusdTest, ControlCanBeLimitedToListedUsers) {
    start({"--control-users", "54321", "--control-groups", "54321"});
    const auto before = limit_of(0);
    const auto reply = post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" +
                            std::to_string(a_valid_limit_other_than_current(0)) + "&block=true");
    EXPECT_EQ(reply.status, 403);
    EXPECT_NE(json_of(reply)["error"].get<std::string>().find("uid 0"), std::string::npos) << reply.body;
    EXPECT_EQ(limit_of(0), before);
    EXPECT_EQ(get("/gpu/get_power_limit").status, 200);  // reads stay open
}

TEST_F(ZeusdTest, ControlRequestsAreLoggedWithThePeersCredentials) {
    start();
    ASSERT_EQ(post("/gpu/reset_locked_clocks?gpu_ids=0&block=true").status, 200);
    EXPECT_NE(log().find(fmt::format("POST /gpu/reset_locked_clocks?gpu_ids=0&block=true from pid {} uid {} gid {}",
                                     ::getpid(), ::getuid(), ::getgid())),
              std::string::npos)
        << log();
}

TEST_F(ZeusdTest, OverriddenCommandsRunInsteadOfTheDeviceCall) {
    const auto record = dir_ / "override-args";
    const auto script = dir_ / "set-limit.sh";
    std::ofstream(script) << "#!/bin/sh\necho \"$@\" >> " << record.string() << "\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const auto toml = dir_ / "overrides.toml";
    std::ofstream(toml) << "[set_power_limit]\ncommands = [\"" << script.string()
                        << " --gpu {gpu_id} --watts {power_limit_w} --mw {power_limit_mw}\"]\n";
    std::filesystem::permissions(toml, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    start({"--gpu-command-overrides", toml.string()});
    const auto before = limit_of(1);
    const auto reply = post("/gpu/set_power_limit?gpu_ids=1&power_limit_mw=250500&block=true&persist=true");
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    std::ifstream in(record);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "--gpu 1 --watts 250 --mw 250500");
    EXPECT_EQ(limit_of(1), before);  // NVML was not called
}

TEST_F(ZeusdTest, TheAnswerSaysWhenAChangeWillBeUndone) {
    start();
    const auto target = std::to_string(a_valid_limit_other_than_current(0));
    const auto undone = post("/gpu/set_power_limit?gpu_ids=0&block=true&power_limit_mw=" + target);
    ASSERT_EQ(undone.status, 200) << undone.body;
    EXPECT_EQ(undone.headers.at("zeusd-restore"),
              fmt::format("undone when client pid {} exits (or zeusd stops); add persist=true to the query to keep it",
                          ::getpid()));
    const auto kept = post("/gpu/set_power_limit?gpu_ids=0&block=false&persist=true&power_limit_mw=" + target);
    ASSERT_EQ(kept.status, 200) << kept.body;
    EXPECT_EQ(kept.headers.at("zeusd-restore"), "kept: persist=true, zeusd will not undo this change");
    // A reset leaves nothing to undo.
    EXPECT_EQ(post("/gpu/reset_locked_clocks?gpu_ids=0&block=true").headers.count("zeusd-restore"), 0U);
}

TEST_F(ZeusdTest, RestoresForTcpClientsSayWhyInsteadOfNamingPidZero) {
    start_tcp("127.0.0.1", {"--restore-ledger", (dir_ / "ledger.json").string()});
    const auto baseline = limit_of(0);
    const auto target = a_valid_limit_other_than_current(0);
    ASSERT_EQ(post("/gpu/set_power_limit?gpu_ids=0&block=true&power_limit_mw=" + std::to_string(target)).status, 200);
    EXPECT_EQ(daemon_->stop(), 0);
    EXPECT_EQ(limit_of(0), baseline);
    EXPECT_NE(log().find("restored GPU 0 with set_power_limit (zeusd is stopping)"), std::string::npos) << log();
    EXPECT_EQ(log().find("pid 0"), std::string::npos) << log();
}

}  // namespace
}  // namespace zeus::testing
