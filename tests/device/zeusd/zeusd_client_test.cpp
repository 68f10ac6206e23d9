// ZeusdClient against a fake daemon process: the exact requests it sends
// (routes, parameter names and order, true/false, comma-joined ids, Bearer
// header), what it makes of each answer, and every error path.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "device/zeusd/fake_zeusd.hpp"
#include "zeus/device/zeusd_client.hpp"

namespace zeus {
namespace {

using testing::FakeZeusd;

std::shared_ptr<ZeusdClient> connect_ok(const ZeusdConfig& config) {
    auto client = ZeusdClient::connect(config);
    EXPECT_TRUE(client.ok()) << (client.ok() ? "" : client.error().describe());
    return client.ok() ? *client : nullptr;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

nlohmann::json with_auth(nlohmann::json config) {
    config["auth_required"] = true;
    config["tokens"] = {
        {"reader", {{"sub", "alice"}, {"scopes", {"gpu-read", "cpu-read"}}, {"exp", 1762864200}}},
        {"admin", {{"sub", "root"}, {"scopes", {"gpu-control", "gpu-read", "cpu-read"}}}},
        {"old", {{"sub", "bob"}, {"scopes", {"gpu-read"}}, {"expired", true}}},
    };
    return config;
}

TEST(ZeusdClient, DiscoversOverUnixSocket) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    const auto& d = client->discovery();
    ASSERT_EQ(d.gpus.size(), 2U);
    EXPECT_EQ(d.gpus[1].id, 1U);
    EXPECT_EQ(d.gpus[0].name, "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(d.gpus[1].pci_address, "0000:02:00.0");
    EXPECT_TRUE(d.gpus[0].cumulative_energy_available);
    ASSERT_EQ(d.cpus.size(), 2U);
    EXPECT_TRUE(d.cpus[0].dram_available);
    EXPECT_FALSE(d.cpus[1].dram_available);
    EXPECT_FALSE(client->auth_required());
    EXPECT_TRUE(client->can_read_gpu());
    EXPECT_TRUE(client->can_control_gpu());
    EXPECT_TRUE(client->can_read_cpu());
    EXPECT_FALSE(client->identity().has_value());  // no whoami without auth

    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].method, "GET");
    EXPECT_EQ(requests[0].path, "/discover");
    EXPECT_EQ(requests[0].headers.count("authorization"), 0U);
}

TEST(ZeusdClient, WorksOverTcpWithTheSameRequests) {
    FakeZeusd daemon(FakeZeusd::default_config(), FakeZeusd::Listen::Tcp);
    auto client = connect_ok(daemon.client_config("tok"));
    ASSERT_TRUE(client);
    auto energy = client->gpu_energy({1});
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    const auto requests = daemon.requests("/gpu/get_cumulative_energy");
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].query, "gpu_ids=1");
    EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer tok");
    EXPECT_EQ(requests[0].headers.at("host").rfind("127.0.0.1:", 0), 0U);
}

TEST(ZeusdClient, UnreachableDaemonNamesTheSocketAndTheFix) {
    auto client = ZeusdClient::connect(ZeusdConfig::unix_socket("/nonexistent/zeusd.sock"));
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.error().code, ErrorCode::Unavailable);
    EXPECT_TRUE(contains(client.error().message, "could not reach zeusd at unix:/nonexistent/zeusd.sock"))
        << client.error().message;
    EXPECT_TRUE(contains(client.error().hint, "ZEUSD_SOCK_PATH")) << client.error().hint;
    EXPECT_TRUE(contains(client.error().hint, "zeusd serve")) << client.error().hint;

    auto tcp = ZeusdClient::connect(ZeusdConfig::tcp("127.0.0.1", 1));  // nothing listens on port 1
    ASSERT_FALSE(tcp.ok());
    EXPECT_TRUE(contains(tcp.error().message, "127.0.0.1:1")) << tcp.error().message;
    EXPECT_TRUE(contains(tcp.error().hint, "ZEUSD_HOST_PORT")) << tcp.error().hint;
}

// A socket this user may not write to (the packaged zeusd's is root:zeus,
// mode 660) is a permission problem with its own fix, not "start zeusd".
TEST(ZeusdClient, ASocketThisUserMayNotUseSaysPermissionDeniedAndNamesTheGroup) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run the client as another user";
    char dir_template[] = "/tmp/zeusd-permission-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const std::filesystem::path dir = dir_template;
    ::chmod(dir.c_str(), 0755);
    const std::string path = (dir / "zeusd.sock").string();
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listener, 4), 0);
    ASSERT_EQ(::chmod(path.c_str(), 0660), 0);
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(pipe_fds[0]);
        int verdict = 1;
        if (::setgid(65534) == 0 && ::setgroups(0, nullptr) == 0 && ::setuid(65534) == 0) {
            auto client = ZeusdClient::connect(ZeusdConfig::unix_socket(path));
            const bool says = !client.ok() && client.error().code == ErrorCode::NoPermission &&
                              contains(client.error().message, "permission denied: " + path + " is root:") &&
                              contains(client.error().message, "mode 660") &&
                              contains(client.error().hint, "sudo adduser $USER");
            verdict = says ? 0 : 2;
            if (!says) {
                const std::string text = client.ok() ? std::string("connected") : client.error().describe();
                (void)::write(pipe_fds[1], text.data(), text.size());
            }
        }
        ::_exit(verdict);
    }
    ::close(pipe_fds[1]);
    std::string told(4096, '\0');
    const auto got = ::read(pipe_fds[0], told.data(), told.size());
    told.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(listener);
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << told;
}

TEST(ZeusdClient, OlderDaemonWithoutDiscoverFieldsIsRefused) {
    auto config = FakeZeusd::default_config();
    config["discover_raw"] = {{"gpus", {{{"id", 0}, {"name", "A40"}}}}, {"cpus", nlohmann::json::array()},
                              {"enabled_api_groups", {"gpu-read"}}, {"auth_required", false}};
    FakeZeusd daemon(config);
    auto client = ZeusdClient::connect(daemon.client_config());
    ASSERT_FALSE(client.ok());
    EXPECT_TRUE(contains(client.error().message, "older")) << client.error().message;
    EXPECT_TRUE(contains(client.error().message, "pci_address")) << client.error().message;
    EXPECT_TRUE(contains(client.error().hint, "update zeusd")) << client.error().hint;

    config["discover_raw"] = {{"gpus", nlohmann::json::array()}};  // no cpus, groups, auth_required
    FakeZeusd older(config);
    client = ZeusdClient::connect(older.client_config());
    ASSERT_FALSE(client.ok());
    EXPECT_TRUE(contains(client.error().message, "\"cpus\"")) << client.error().message;
}

TEST(ZeusdClient, DiscoverNot200IsRefusedWithTheBody) {
    auto config = FakeZeusd::default_config();
    config["responses"] = {{"GET /discover", {{"status", 404}, {"body", "no such route"}, {"content_type", "text/plain"}}}};
    FakeZeusd daemon(config);
    auto client = ZeusdClient::connect(daemon.client_config());
    ASSERT_FALSE(client.ok());
    EXPECT_TRUE(contains(client.error().message, "404: no such route")) << client.error().message;
}

TEST(ZeusdClient, AuthRequiredWithoutTokenIsRecordedNotFatal) {
    FakeZeusd daemon(with_auth(FakeZeusd::default_config()));
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    EXPECT_TRUE(client->auth_required());
    ASSERT_TRUE(client->auth_error().has_value());
    EXPECT_EQ(client->auth_error()->code, ErrorCode::NoPermission);
    EXPECT_TRUE(contains(client->auth_error()->hint, "ZEUSD_TOKEN"));
    EXPECT_FALSE(client->can_read_gpu());
    EXPECT_FALSE(client->can_read_cpu());
    auto s = client->require({.read_cpu = true});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "requires authentication")) << s.error().message;
    EXPECT_TRUE(daemon.requests("/auth/whoami").empty());  // nothing to ask without a token

    // A request anyway is the daemon's 401, with its words.
    auto energy = client->cpu_energy({}, true, true);
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().code, ErrorCode::NoPermission);
    EXPECT_EQ(energy.error().vendor_code, 401);
    EXPECT_TRUE(contains(energy.error().message, "answered 401 to GET /cpu/get_cumulative_energy?cpu=true&dram=true"))
        << energy.error().message;
    EXPECT_TRUE(contains(energy.error().message, "Authentication required.")) << energy.error().message;
}

TEST(ZeusdClient, WhoamiGivesScopesAndCapabilities) {
    FakeZeusd daemon(with_auth(FakeZeusd::default_config()));
    auto client = connect_ok(daemon.client_config("reader"));
    ASSERT_TRUE(client);
    EXPECT_FALSE(client->auth_error().has_value());
    ASSERT_TRUE(client->identity().has_value());
    EXPECT_EQ(client->identity()->sub, "alice");
    EXPECT_EQ(client->identity()->scopes, (std::vector<std::string>{"gpu-read", "cpu-read"}));
    ASSERT_TRUE(client->identity()->expires.has_value());
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(client->identity()->expires->time_since_epoch()).count(),
              1762864200);
    EXPECT_TRUE(client->can_read_gpu());
    EXPECT_TRUE(client->can_read_cpu());
    EXPECT_FALSE(client->can_control_gpu());

    const auto whoami = daemon.requests("/auth/whoami");
    ASSERT_EQ(whoami.size(), 1U);
    EXPECT_EQ(whoami[0].headers.at("authorization"), "Bearer reader");

    auto s = client->require({.read_gpu = true, .control_gpu = true, .gpu_ids = {0, 7}});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::NoPermission);
    EXPECT_TRUE(contains(s.error().message, "user 'alice' lacks scope gpu-control")) << s.error().message;
    EXPECT_TRUE(contains(s.error().message, "token scopes: gpu-read, cpu-read")) << s.error().message;
    EXPECT_TRUE(contains(s.error().message, "GPU 7 not on the daemon (it has GPUs: 0, 1)")) << s.error().message;
    EXPECT_TRUE(contains(s.error().hint, "zeusd token issue --scope gpu-control")) << s.error().hint;

    // The daemon's own 403 is surfaced as it said it.
    auto set = client->set_power_limit({0}, Milliwatts(150'000), true);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().vendor_code, 403);
    EXPECT_TRUE(contains(set.error().message,
                         "Token for user 'alice' lacks required scope 'gpu-control'. Token scopes: ['gpu-read', "
                         "'cpu-read']"))
        << set.error().message;
    EXPECT_TRUE(contains(set.error().hint, "gpu-control scope")) << set.error().hint;
}

TEST(ZeusdClient, RefusedTokensAreAuthErrors) {
    FakeZeusd daemon(with_auth(FakeZeusd::default_config()));
    for (const char* token : {"forged", "old"}) {
        auto client = connect_ok(daemon.client_config(token));
        ASSERT_TRUE(client);
        ASSERT_TRUE(client->auth_error().has_value()) << token;
        EXPECT_EQ(client->auth_error()->vendor_code, 401);
        EXPECT_TRUE(contains(client->auth_error()->message, std::string(token) == "old" ? "Token has expired."
                                                                                      : "Invalid token"))
            << client->auth_error()->message;
        EXPECT_TRUE(contains(client->auth_error()->hint, "ZEUSD_TOKEN")) << client->auth_error()->hint;
        EXPECT_FALSE(client->require({.read_gpu = true}).ok());
    }
}

TEST(ZeusdClient, DisabledGroupIsNamedWithTheEnableFix) {
    auto config = FakeZeusd::default_config();
    config["enabled_api_groups"] = {"gpu-read"};
    FakeZeusd daemon(config);
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    EXPECT_TRUE(client->can_read_gpu());
    EXPECT_FALSE(client->can_control_gpu());
    EXPECT_FALSE(client->can_read_cpu());
    auto s = client->require({.control_gpu = true, .read_cpu = true});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "API groups not enabled: gpu-control, cpu-read (enabled: gpu-read)"))
        << s.error().message;
    EXPECT_TRUE(contains(s.error().hint, "--enable gpu-control,cpu-read")) << s.error().hint;

    auto energy = client->cpu_energy({0}, true, false);
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().vendor_code, 404);
    EXPECT_TRUE(contains(energy.error().message, "API group 'cpu-read' is not enabled on this server."));
    EXPECT_TRUE(contains(energy.error().hint, "--enable cpu-read")) << energy.error().hint;
}

TEST(ZeusdClient, ControlRoutesSendTheOriginalsQueries) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config("t0k"));
    ASSERT_TRUE(client);
    daemon.clear_requests();
    ASSERT_TRUE(client->set_power_limit({1, 0}, Milliwatts(175'000), true).ok());
    ASSERT_TRUE(client->set_persistence_mode({0}, false, false).ok());
    ASSERT_TRUE(client->set_gpu_locked_clocks({0}, Megahertz(1000), Megahertz(1410), true).ok());
    ASSERT_TRUE(client->reset_gpu_locked_clocks({1}, true).ok());
    ASSERT_TRUE(client->set_memory_locked_clocks({0, 1}, Megahertz(1215), Megahertz(1593), false).ok());
    ASSERT_TRUE(client->reset_memory_locked_clocks({0}, true).ok());
    ASSERT_TRUE(client->reset_locked_clocks({1}, true).ok());

    const std::vector<std::pair<std::string, std::string>> expected = {
        {"/gpu/set_power_limit", "gpu_ids=1,0&power_limit_mw=175000&block=true"},
        {"/gpu/set_persistence_mode", "gpu_ids=0&enabled=false&block=false"},
        {"/gpu/set_gpu_locked_clocks", "gpu_ids=0&min_clock_mhz=1000&max_clock_mhz=1410&block=true"},
        {"/gpu/reset_gpu_locked_clocks", "gpu_ids=1&block=true"},
        {"/gpu/set_mem_locked_clocks", "gpu_ids=0,1&min_clock_mhz=1215&max_clock_mhz=1593&block=false"},
        {"/gpu/reset_mem_locked_clocks", "gpu_ids=0&block=true"},
        {"/gpu/reset_locked_clocks", "gpu_ids=1&block=true"},
    };
    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(requests[i].method, "POST");
        EXPECT_EQ(requests[i].path, expected[i].first);
        EXPECT_EQ(requests[i].query, expected[i].second);
        EXPECT_EQ(requests[i].body, "");  // every parameter is in the query
        EXPECT_EQ(requests[i].headers.at("authorization"), "Bearer t0k");
        EXPECT_EQ(requests[i].headers.count("content-type"), 0U);
    }
    // The daemon applied it: read back through its own route.
    auto limits = client->power_limit({0, 1});
    ASSERT_TRUE(limits.ok()) << limits.error().describe();
    EXPECT_EQ(limits->at(1), Milliwatts(175'000));
    EXPECT_FALSE(client->persistence_mode({0})->at(0));
}

TEST(ZeusdClient, ControlArgumentsOutOfRangeNeverReachTheDaemon) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    daemon.clear_requests();
    EXPECT_EQ(client->set_power_limit({}, Milliwatts(100'000), true).error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(client->set_power_limit({0}, Milliwatts(-1), true).error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(client->set_gpu_locked_clocks({0}, Megahertz(1), Megahertz(5'000'000'000), true).error().code,
              ErrorCode::InvalidArgument);
    EXPECT_TRUE(daemon.requests().empty());
}

TEST(ZeusdClient, GpuReadsParseEveryShape) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    daemon.clear_requests();
    auto energy = client->gpu_energy();
    ASSERT_TRUE(energy.ok()) << energy.error().describe();
    EXPECT_EQ(energy->size(), 2U);
    EXPECT_EQ(energy->at(0), Millijoules(2000));  // the fake starts at 1000 (id+1) mJ and adds 1000 per read
    auto power = client->gpu_power({1});
    ASSERT_TRUE(power.ok()) << power.error().describe();
    EXPECT_EQ(power->power.at(1), Milliwatts(76'000));
    EXPECT_LT(std::chrono::abs(power->timestamp - std::chrono::system_clock::now()), std::chrono::seconds(60));
    auto range = client->power_limit_constraints({0});
    ASSERT_TRUE(range.ok()) << range.error().describe();
    EXPECT_EQ(range->at(0).first, Milliwatts(100'000));
    EXPECT_EQ(range->at(0).second, Milliwatts(300'000));
    auto persistence = client->persistence_mode();
    ASSERT_TRUE(persistence.ok());
    EXPECT_TRUE(persistence->at(1));
    auto when = client->time();
    ASSERT_TRUE(when.ok()) << when.error().describe();
    EXPECT_LT(std::chrono::abs(*when - std::chrono::system_clock::now()), std::chrono::seconds(60));

    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), 5U);
    EXPECT_EQ(requests[0].path, "/gpu/get_cumulative_energy");
    EXPECT_EQ(requests[0].query, "");  // all GPUs: no gpu_ids at all
    EXPECT_EQ(requests[1].query, "gpu_ids=1");
    EXPECT_EQ(requests[2].path, "/gpu/get_power_limit_constraints");
    EXPECT_EQ(requests[4].path, "/time");
    for (const auto& r : requests) EXPECT_EQ(r.method, "GET");
}

TEST(ZeusdClient, CpuReadsSendCpuAndDramFlags) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    daemon.clear_requests();
    auto both = client->cpu_energy({0, 1}, true, true);
    ASSERT_TRUE(both.ok()) << both.error().describe();
    EXPECT_EQ(both->at(0).cpu, Microjoules(3'000'000));
    EXPECT_EQ(both->at(0).dram, Microjoules(800'000));
    EXPECT_EQ(both->at(1).cpu, Microjoules(3'000'000));
    EXPECT_FALSE(both->at(1).dram.has_value());  // null: CPU 1 has no DRAM zone
    auto dram_only = client->cpu_energy({}, false, true);
    ASSERT_TRUE(dram_only.ok()) << dram_only.error().describe();
    EXPECT_FALSE(dram_only->at(0).cpu.has_value());
    EXPECT_TRUE(dram_only->at(0).dram.has_value());
    auto power = client->cpu_power({1});
    ASSERT_TRUE(power.ok()) << power.error().describe();
    EXPECT_EQ(power->power.at(1).cpu, Milliwatts(85'001));
    EXPECT_FALSE(power->power.at(1).dram.has_value());

    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), 3U);
    EXPECT_EQ(requests[0].query, "cpu=true&dram=true&cpu_ids=0,1");
    EXPECT_EQ(requests[1].query, "cpu=false&dram=true");
    EXPECT_EQ(requests[2].path, "/cpu/get_power");
    EXPECT_EQ(requests[2].query, "cpu_ids=1");
}

TEST(ZeusdClient, ErrorBodiesAreSurfacedWithTheStatus) {
    auto config = FakeZeusd::default_config();
    config["responses"] = {
        {"POST /gpu/set_power_limit",
         {{"status", 500}, {"body", R"({"errors": {"0": "NVML error: Unknown Error", "1": "GPU is lost"}})"}}},
        {"POST /gpu/set_persistence_mode",
         {{"status", 403}, {"body", R"({"errors": {"0": "NVML error: Insufficient Permissions"}})"}}},
        {"GET /cpu/get_power", {{"status", 503}, {"body", ""}}},
        {"GET /gpu/get_power_limit", {{"status", 204}, {"body", ""}}},
    };
    FakeZeusd daemon(config);
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);

    auto set = client->set_power_limit({0, 1}, Milliwatts(150'000), true);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().vendor_code, 500);
    EXPECT_TRUE(contains(set.error().message, "Failed to set the GPU power limit: zeusd at unix:"));
    EXPECT_TRUE(contains(set.error().message, "GPU 0: NVML error: Unknown Error; GPU 1: GPU is lost"))
        << set.error().message;
    EXPECT_TRUE(contains(set.error().hint, "log")) << set.error().hint;

    auto persist = client->set_persistence_mode({0}, true, true);
    ASSERT_FALSE(persist.ok());
    EXPECT_EQ(persist.error().code, ErrorCode::NoPermission);
    EXPECT_TRUE(contains(persist.error().hint, "CAP_SYS_ADMIN")) << persist.error().hint;  // the daemon's, not ours

    auto power = client->cpu_power();
    ASSERT_FALSE(power.ok());
    EXPECT_TRUE(contains(power.error().message, "answered 503 to GET /cpu/get_power: (empty body)"))
        << power.error().message;

    // Anything but 200 is an error, as in the original client.
    auto limit = client->power_limit();
    ASSERT_FALSE(limit.ok());
    EXPECT_EQ(limit.error().vendor_code, 204);
}

TEST(ZeusdClient, BadRequestsGetTheDaemonsPlainTextAndJsonBodies) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    // GPU 5 does not exist: zeusd answers plain text on writes...
    auto set = client->set_power_limit({5}, Milliwatts(150'000), true);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(set.error().vendor_code, 400);
    EXPECT_TRUE(contains(set.error().message, "GPU index 5 does not exist.")) << set.error().message;
    // ... and {"error": ...} on reads.
    auto energy = client->gpu_energy({5});
    ASSERT_FALSE(energy.ok());
    EXPECT_TRUE(contains(energy.error().message, ": GPU 5 not found")) << energy.error().message;
}

TEST(ZeusdClient, MalformedSuccessfulAnswersAreErrorsNotZeros) {
    auto config = FakeZeusd::default_config();
    config["responses"] = {
        {"GET /gpu/get_cumulative_energy", {{"status", 200}, {"body", R"({"0": {"energy": 5}})"}}},
        {"GET /gpu/get_power", {{"status", 200}, {"body", "not json"}}},
        {"GET /cpu/get_cumulative_energy", {{"status", 200}, {"body", R"({"0": {"cpu_energy_uj": -3, "dram_energy_uj": null}})"}}},
        {"GET /gpu/get_power_limit", {{"status", 200}, {"body", R"({"1": {"power_limit_mw": 100}})"}}},
    };
    FakeZeusd daemon(config);
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    auto energy = client->gpu_energy({0});
    ASSERT_FALSE(energy.ok());
    EXPECT_EQ(energy.error().code, ErrorCode::InvalidState);
    EXPECT_TRUE(contains(energy.error().message, "no \"energy_mj\"")) << energy.error().message;
    auto power = client->gpu_power();
    ASSERT_FALSE(power.ok());
    EXPECT_TRUE(contains(power.error().message, "not JSON: not json")) << power.error().message;
    auto cpu = client->cpu_energy({0}, true, true);
    ASSERT_FALSE(cpu.ok());
    EXPECT_TRUE(contains(cpu.error().message, "\"cpu_energy_uj\": -3")) << cpu.error().message;
    auto limit = client->power_limit({0});
    ASSERT_FALSE(limit.ok());
    EXPECT_TRUE(contains(limit.error().message, "no entry for requested device 0")) << limit.error().message;
}

TEST(ZeusdClient, OneConnectionIsReusedAcrossRequests) {
    FakeZeusd daemon;
    auto client = connect_ok(daemon.client_config());
    ASSERT_TRUE(client);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(client->time().ok());
    const auto requests = daemon.requests();
    ASSERT_EQ(requests.size(), 21U);  // /discover and 20 x /time
    for (const auto& r : requests) EXPECT_EQ(r.connection, requests.front().connection) << "a new connection";
}

}  // namespace
}  // namespace zeus
