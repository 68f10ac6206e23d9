// zeusd serve --control-policy owner end to end: a real daemon on a Unix
// socket over the simulator, two users (one created for the test with
// useradd, and nobody), each with a process the simulator runs on GPU 0
// (zeus-sim burn --pid). The client is the test user: allowed while GPU 0 is
// idle or runs only its process, refused (403 naming the other user's
// process, also through the library's client) while nobody's runs there,
// and allowed again once that process is gone.
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "metrics/prometheus_servers.hpp"
#include "support/build_paths.hpp"
#include "zeus/device/zeusd_client.hpp"
#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using nlohmann::json;

// Runs `command` through the shell; its exit status.
int shell(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A user of the test's own, removed at the end.
class TemporaryUser {
  public:
    TemporaryUser() : name_(fmt::format("zeusd-own-{}", ::getpid())) {
        // useradd exits 10 while another one holds /etc/passwd's lock.
        for (int attempt = 0; attempt < 20; ++attempt) {
            const int status =
                shell(fmt::format("useradd --no-create-home --shell /usr/sbin/nologin {} 2>/dev/null", name_));
            if (status == 0) break;
            if (status != 10) return;
            ::usleep(200'000);
        }
        if (const passwd* entry = ::getpwnam(name_.c_str()); entry != nullptr) {
            uid_ = entry->pw_uid;
            gid_ = entry->pw_gid;
        }
    }
    ~TemporaryUser() {
        if (uid_) (void)shell(fmt::format("userdel {} 2>/dev/null", name_));
    }
    TemporaryUser(const TemporaryUser&) = delete;
    TemporaryUser& operator=(const TemporaryUser&) = delete;

    [[nodiscard]] bool created() const { return uid_.has_value(); }
    [[nodiscard]] uid_t uid() const { return *uid_; }
    [[nodiscard]] gid_t gid() const { return gid_; }
    [[nodiscard]] const std::string& name() const { return name_; }

  private:
    std::string name_;
    std::optional<uid_t> uid_;
    gid_t gid_ = 0;
};

void become(uid_t uid, gid_t gid) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(120);
}

// Runs `body` in a child process as `uid`; what it returned.
std::string run_as(uid_t uid, gid_t gid, const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        become(uid, gid);
        std::string out;
        try {
            out = body();
        } catch (const std::exception& e) {
            out = std::string("exception: ") + e.what();
        }
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    ::waitpid(child, nullptr, 0);
    return out;
}

// A process of `uid` that waits to be killed: what the simulator's load is attributed to.
class UserProcess {
  public:
    UserProcess(uid_t uid, gid_t gid) {
        pid_ = ::fork();
        if (pid_ == 0) {
            become(uid, gid);
            while (true) ::pause();
        }
    }
    ~UserProcess() { end(); }
    void end() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    [[nodiscard]] pid_t pid() const { return pid_; }

  private:
    pid_t pid_ = -1;
};

// `zeus-sim burn` on GPU 0 for `pid`, running once the driver lists it.
class Burn : public SimBurn {
  public:
    explicit Burn(pid_t pid) : SimBurn(0, pid), pid_(pid) {}
    [[nodiscard]] bool running() const {
        return eventually([this] { return ZeusdTest::gpu_runs(0, pid_); });
    }

  private:
    pid_t pid_;
};

class OwnerPolicyTest : public ZeusdTest {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root: creates a user and runs processes as other users";
        if (shell("command -v useradd >/dev/null && command -v userdel >/dev/null") != 0) {
            GTEST_SKIP() << "needs useradd and userdel";
        }
        ZeusdTest::SetUp();
        user_ = std::make_unique<TemporaryUser>();
        ASSERT_TRUE(user_->created()) << "useradd " << user_->name() << " failed";
        const passwd* nobody = ::getpwnam("nobody");
        ASSERT_NE(nobody, nullptr);
        nobody_uid_ = nobody->pw_uid;
        nobody_gid_ = nobody->pw_gid;
    }
    void TearDown() override {
        ZeusdTest::TearDown();
        user_.reset();
    }

    // POST set_power_limit on `gpu_ids` as the test user, over raw HTTP.
    [[nodiscard]] HttpReply set_limit_as_user(std::int64_t limit_mw, const std::string& gpu_ids = "0") const {
        const std::string target =
            fmt::format("/gpu/set_power_limit?gpu_ids={}&power_limit_mw={}&block=true&persist=true", gpu_ids, limit_mw);
        const std::string out = run_as(user_->uid(), user_->gid(), [&] {
            const HttpReply reply = http_request(endpoint_, "POST", target);
            return std::to_string(reply.status) + "\n" + reply.body;
        });
        HttpReply reply;
        const auto newline = out.find('\n');
        if (newline == std::string::npos) throw std::runtime_error("the client as the test user failed: " + out);
        reply.status = std::stoi(out.substr(0, newline));
        reply.body = out.substr(newline + 1);
        return reply;
    }

    static std::int64_t limit_of_gpu0() { return local_gpus()[0].power_limit().value().count(); }
    static std::int64_t another_limit() {
        const auto gpus = local_gpus();
        const auto range = gpus[0].power_limit_constraints().value();
        const auto current = gpus[0].power_limit().value().count();
        return current == range.max.count() ? range.min.count() : range.max.count();
    }

    std::unique_ptr<TemporaryUser> user_;
    uid_t nobody_uid_ = 0;
    gid_t nobody_gid_ = 0;
};

TEST_F(OwnerPolicyTest, IdleAndOwnGpusAreAllowedAnotherUsersIsRefusedUntilItsProcessEnds) {
    start({"--control-policy", "owner", "--enable", "gpu-control,gpu-read,metrics"});

    // Idle.
    auto target = another_limit();
    auto reply = set_limit_as_user(target);
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(limit_of_gpu0(), target);

    // The user's own process on it.
    UserProcess own(user_->uid(), user_->gid());
    Burn own_burn(own.pid());
    ASSERT_TRUE(own_burn.running());
    target = another_limit();
    reply = set_limit_as_user(target);
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(limit_of_gpu0(), target);

    // And nobody's too: refused, the GPU unchanged.
    UserProcess other(nobody_uid_, nobody_gid_);
    Burn other_burn(other.pid());
    ASSERT_TRUE(other_burn.running());
    const auto before = limit_of_gpu0();
    reply = set_limit_as_user(another_limit());
    ASSERT_EQ(reply.status, 403) << reply.body;
    EXPECT_EQ(limit_of_gpu0(), before);
    const json body = json_of(reply);
    const std::string error = body["error"].get<std::string>();
    EXPECT_NE(error.find(fmt::format("GPU 0 is in use by another user's process: pid {} (user nobody, uid {})",
                                     other.pid(), nobody_uid_)),
              std::string::npos)
        << error;
    EXPECT_NE(error.find(fmt::format("your processes (uid {})", user_->uid())), std::string::npos) << error;
    EXPECT_EQ(error.find(fmt::format("pid {}", own.pid())), std::string::npos) << "the user's own process is no reason";
    ASSERT_EQ(body["refused"].size(), 1U);
    EXPECT_EQ(body["refused"][0]["gpu"], 0);
    EXPECT_EQ(body["refused"][0]["reason"], "other_user");
    EXPECT_EQ(body["refused"][0]["processes"],
              json::array({{{"pid", other.pid()}, {"uid", nobody_uid_}, {"user", "nobody"}}}));
    EXPECT_NE(body["fix"].get<std::string>().find("wait until the other users' processes end"), std::string::npos);
    // A request naming an idle GPU too changes neither.
    const auto gpu1_before = local_gpus()[1].power_limit().value().count();
    reply = set_limit_as_user(another_limit(), "1,0");
    ASSERT_EQ(reply.status, 403) << reply.body;
    EXPECT_EQ(limit_of_gpu0(), before);
    EXPECT_EQ(local_gpus()[1].power_limit().value().count(), gpu1_before);
    EXPECT_NE(log().find("refused /gpu/set_power_limit from pid"), std::string::npos) << log();
    EXPECT_NE(log().find("owner policy refusals since start: 2 for other users' processes, 0 unverifiable"),
              std::string::npos)
        << log();

    // The library's client shows the daemon's words and its fix.
    const std::string socket = *endpoint_.unix_path;
    const auto refused_limit = another_limit();
    const std::string described = run_as(user_->uid(), user_->gid(), [&] {
        auto client = ZeusdClient::connect(ZeusdConfig::unix_socket(socket));
        if (!client) return "connect: " + client.error().describe();
        const Status set = client.value()->set_power_limit({0}, Milliwatts(refused_limit), true);
        return set ? std::string("allowed") : set.error().describe();
    });
    EXPECT_NE(described.find("answered 403"), std::string::npos) << described;
    EXPECT_NE(described.find(fmt::format("pid {} (user nobody, uid {})", other.pid(), nobody_uid_)), std::string::npos)
        << described;
    EXPECT_NE(described.find("wait until the other users' processes end"), std::string::npos) << described;
    EXPECT_EQ(limit_of_gpu0(), before);

    // The other user's process is gone: allowed again.
    const pid_t other_pid = other.pid();
    other_burn.end();
    other.end();
    ASSERT_TRUE(eventually([&] { return !gpu_runs(0, other_pid); }));
    target = another_limit();
    reply = set_limit_as_user(target);
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(limit_of_gpu0(), target);

    // Each check counted by its outcome: GPU 0 idle once, the user's own
    // twice (with and after nobody's process), nobody's three times (raw
    // HTTP, with GPU 1, the library); GPU 1 idle once.
    const auto samples = parse_exposition(get("/metrics").body);
    const std::map<std::string, double> expected = {
        {"idle", 2}, {"own_processes", 2}, {"other_user", 3}, {"unverifiable", 0}};
    for (const auto& [outcome, count] : expected) {
        const auto found = find_samples(samples, "zeusd_control_policy_checks_total", {{"outcome", outcome}});
        ASSERT_EQ(found.size(), 1U) << outcome;
        EXPECT_EQ(found[0].value, count) << outcome;
    }
    // OpenMetrics keeps its one "# EOF", last.
    const auto open_metrics = get("/metrics", {{"Accept", "application/openmetrics-text;version=1.0.0"}}).body;
    EXPECT_TRUE(open_metrics.ends_with("zeusd_control_policy_checks_total{outcome=\"unverifiable\"} 0.0\n# EOF\n"))
        << open_metrics.substr(open_metrics.size() > 400 ? open_metrics.size() - 400 : 0);
    EXPECT_EQ(open_metrics.find("# EOF"), open_metrics.size() - 6);
}

// Over TCP there are no peer credentials: the token's user, when it is a
// local user, is the client; a token for no local user owns no process.
TEST_F(OwnerPolicyTest, OverTcpTheTokensLocalUserIsTheClient) {
    const auto key = dir_ / "signing.key";
    std::ofstream(key) << "a-test-signing-key-of-some-length";
    std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const auto token_for = [&](const std::string& user) {
        auto [status, output] = run_zeusd({"token", "issue", "--signing-key-path", key.string(), "--user", user,
                                           "--scope", "gpu-control,gpu-read", "--expires", "1h"});
        EXPECT_EQ(status, 0) << output;
        while (!output.empty() && output.back() == '\n') output.pop_back();
        return std::map<std::string, std::string>{{"Authorization", "Bearer " + output}};
    };
    start_tcp("127.0.0.1", {"--control-policy", "owner", "--signing-key-path", key.string()});
    UserProcess own(user_->uid(), user_->gid());
    Burn burn(own.pid());
    ASSERT_TRUE(burn.running());
    const auto target = another_limit();
    const std::string set_gpu0 =
        fmt::format("/gpu/set_power_limit?gpu_ids=0&power_limit_mw={}&block=true&persist=true", target);

    auto reply = post(set_gpu0, token_for(user_->name()));
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(limit_of_gpu0(), target);

    reply = post(set_gpu0, token_for("no-such-local-user"));
    ASSERT_EQ(reply.status, 403) << reply.body;
    const std::string error = json_of(reply)["error"].get<std::string>();
    EXPECT_NE(error.find(fmt::format("pid {} (user {}, uid {})", own.pid(), user_->name(), user_->uid())),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("zeusd cannot tell who you are: your token names user 'no-such-local-user', who has no "
                         "account on this host"),
              std::string::npos)
        << error;
    // An idle GPU is anyone's.
    reply = post("/gpu/reset_locked_clocks?gpu_ids=1&block=true", token_for("no-such-local-user"));
    EXPECT_EQ(reply.status, 200) << reply.body;
}

// The driver lists a process /proc does not have (it ended while zeusd
// looked, or is in another PID namespace): refused, never allowed.
TEST_F(OwnerPolicyTest, AProcessZeusdCannotFindIsRefusedNotAllowed) {
    pid_t ghost = 4'000'000;
    while (std::filesystem::exists("/proc/" + std::to_string(ghost))) ++ghost;
    start({"--control-policy", "owner"});
    SimBurn burn(0, ghost);
    ASSERT_TRUE(eventually([&] { return gpu_runs(0, ghost); }));
    const auto before = limit_of_gpu0();
    const auto reply = set_limit_as_user(another_limit());
    ASSERT_EQ(reply.status, 403) << reply.body;
    EXPECT_EQ(limit_of_gpu0(), before);
    const json body = json_of(reply);
    EXPECT_EQ(body["refused"][0]["reason"], "unverifiable");
    EXPECT_NE(body["refused"][0]["detail"].get<std::string>().find(
                  fmt::format("process {} on GPU 0 ended while zeusd checked who runs it", ghost)),
              std::string::npos)
        << reply.body;
    EXPECT_NE(body["error"].get<std::string>().find("GPU 0 was not changed"), std::string::npos) << reply.body;
    EXPECT_EQ(body["fix"], "retry the request; if it keeps failing, see zeusd's log");
}

TEST_F(OwnerPolicyTest, TheDefaultPolicyLetsAnyClientChangeABusyGpu) {
    start();
    UserProcess other(nobody_uid_, nobody_gid_);
    Burn other_burn(other.pid());
    ASSERT_TRUE(other_burn.running());
    const auto target = another_limit();
    const auto reply = set_limit_as_user(target);
    ASSERT_EQ(reply.status, 200) << reply.body << log();
    EXPECT_EQ(limit_of_gpu0(), target);
}

}  // namespace
}  // namespace zeus::testing
