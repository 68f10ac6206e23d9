// `zeus show-env` with a daemon configured: its section in JSON and text,
// the GPUs' "set power limit" judged by the daemon, and CPUs through it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "support/command_output.hpp"

#include "device/zeusd/fake_zeusd.hpp"
#include "support/sim_fixture.hpp"
#include "support/build_paths.hpp"

namespace zeus {
namespace {

using testing::FakeZeusd;

using testing::capture;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class ZeusdShowEnv : public testing::SimulatedGpus {
  protected:
    std::string run(const std::string& zeusd_env, const std::string& args, int& rc) {
        const std::string command =
            "env -u CUDA_VISIBLE_DEVICES -u ZEUSD_SOCK_PATH -u ZEUSD_HOST_PORT -u ZEUSD_TOKEN "
            "ZEUS_POWERCAP_ROOT=/nonexistent ZEUS_SIM_STATE=" +
            (dir_ / "state").string() + " " + zeusd_env + " " + zeus::testing::zeus_cli_path() +
            " show-env --simulate " + args;
        return capture(command, rc);
    }
};

nlohmann::json with_reader_token() {
    auto config = FakeZeusd::default_config();
    config["auth_required"] = true;
    config["tokens"] = {{"reader", {{"sub", "alice"}, {"scopes", {"gpu-read", "cpu-read"}}, {"exp", 1762864200}}}};
    return config;
}

TEST_F(ZeusdShowEnv, JsonReportsTheDaemonUserAndCapabilities) {
    FakeZeusd daemon(with_reader_token());
    int rc = -1;
    const std::string out = run(daemon.environment() + " ZEUSD_TOKEN=reader", "--format json", rc);
    ASSERT_EQ(rc, 0) << out;
    const auto r = nlohmann::json::parse(out);
    const auto& z = r.at("zeusd");
    EXPECT_EQ(z["endpoint"], "unix:" + daemon.socket_path().string());
    EXPECT_TRUE(z["reachable"].get<bool>());
    EXPECT_TRUE(z["token_configured"].get<bool>());
    EXPECT_EQ(z["enabled_api_groups"], nlohmann::json({"gpu-control", "gpu-read", "cpu-read"}));
    EXPECT_EQ(z["gpus"].size(), 2U);
    EXPECT_TRUE(z["auth_required"].get<bool>());
    EXPECT_EQ(z["user"]["sub"], "alice");
    EXPECT_EQ(z["user"]["scopes"], nlohmann::json({"gpu-read", "cpu-read"}));
    EXPECT_EQ(z["user"]["expires"], "2025-11-11T12:30:00Z");
    EXPECT_TRUE(z["capabilities"]["gpu-read"]["permitted"].get<bool>());
    EXPECT_TRUE(z["capabilities"]["cpu-read"]["permitted"].get<bool>());
    EXPECT_FALSE(z["capabilities"]["gpu-control"]["permitted"].get<bool>());
    EXPECT_TRUE(contains(z["capabilities"]["gpu-control"]["reason"]["message"].get<std::string>(),
                         "lacks scope gpu-control"));

    // GPUs are measured locally; their power limit is judged by the daemon.
    ASSERT_EQ(r["gpus"].size(), 2U);
    EXPECT_TRUE(r["gpus"][0]["energy_counter"]["supported"].get<bool>());
    EXPECT_EQ(r["gpus"][0]["power_limit"]["settable_basis"], "zeusd");
    EXPECT_FALSE(r["gpus"][0]["power_limit"]["settable"].get<bool>());
    // CPUs come from the daemon (the local powercap root does not exist).
    ASSERT_EQ(r["cpus"]["packages"].size(), 2U) << r["cpus"].dump();
    EXPECT_TRUE(r["cpus"]["packages"][0]["available"].get<bool>());
    EXPECT_TRUE(r["cpus"]["packages"][0]["dram"]["available"].get<bool>());
}

TEST_F(ZeusdShowEnv, TextSaysWhatEachCapabilityNeeds) {
    FakeZeusd daemon(with_reader_token());
    int rc = -1;
    const std::string out = run(daemon.environment() + " ZEUSD_TOKEN=reader", "", rc);
    ASSERT_EQ(rc, 0) << out;
    EXPECT_TRUE(contains(out, "## zeusd (privileged daemon)")) << out;
    EXPECT_TRUE(contains(out, "Endpoint: unix:" + daemon.socket_path().string() + " (ZEUSD_SOCK_PATH=")) << out;
    EXPECT_TRUE(contains(out, "Reachable: yes")) << out;
    EXPECT_TRUE(contains(out, "Enabled API groups: gpu-control, gpu-read, cpu-read")) << out;
    EXPECT_TRUE(contains(out, "user alice, scopes [gpu-read, cpu-read], token expires 2025-11-11T12:30:00Z")) << out;
    EXPECT_TRUE(contains(out, "control GPUs  (gpu-control): no: ")) << out;
    EXPECT_TRUE(contains(out, "read CPUs     (cpu-read   ): yes")) << out;
    EXPECT_TRUE(contains(out, "(through zeusd, from its groups and this token's scopes)")) << out;
    EXPECT_TRUE(contains(out, "## CPUs (RAPL, through zeusd)")) << out;
}

TEST_F(ZeusdShowEnv, SaysThatControlChangesAreUndoneAtExitWhenControlIsPermitted) {
    FakeZeusd daemon(FakeZeusd::default_config());
    int rc = -1;
    const std::string text = run(daemon.environment(), "", rc);
    ASSERT_EQ(rc, 0) << text;
    EXPECT_TRUE(contains(text, "control GPUs  (gpu-control): yes")) << text;
    EXPECT_TRUE(contains(text, "Note: GPU settings changed through zeusd are undone when the process that changed "
                               "them exits"))
        << text;
    EXPECT_TRUE(contains(text, "persist=true")) << text;
    const auto json = nlohmann::json::parse(run(daemon.environment(), "--format json", rc));
    EXPECT_TRUE(contains(json.at("zeusd").at("control_note").get<std::string>(), "persist=true"));
    // Without control there is nothing to undo, and nothing to say.
    FakeZeusd reader(with_reader_token());
    EXPECT_FALSE(contains(run(reader.environment() + " ZEUSD_TOKEN=reader", "", rc), "persist=true"));
}

TEST_F(ZeusdShowEnv, UnreachableDaemonIsReportedOverTcp) {
    int rc = -1;
    const std::string out = run("ZEUSD_HOST_PORT=127.0.0.1:1", "--format json", rc);
    ASSERT_EQ(rc, 0) << out;  // the simulated GPUs are still measurable
    const auto r = nlohmann::json::parse(out);
    EXPECT_EQ(r["zeusd"]["endpoint"], "127.0.0.1:1");
    EXPECT_FALSE(r["zeusd"]["reachable"].get<bool>());
    EXPECT_TRUE(contains(r["zeusd"]["error"]["message"].get<std::string>(), "could not reach zeusd"));
    EXPECT_FALSE(r["gpus"][0]["power_limit"]["settable"].get<bool>());
    EXPECT_FALSE(r["cpus"].contains("packages") && !r["cpus"]["packages"].empty());
    EXPECT_TRUE(contains(r["cpus"]["error"]["message"].get<std::string>(), "could not reach zeusd"));
}

TEST_F(ZeusdShowEnv, AuthRequiredWithoutTokenAndBadVariable) {
    FakeZeusd daemon(with_reader_token());
    int rc = -1;
    std::string out = run(daemon.environment(), "", rc);
    EXPECT_TRUE(contains(out, "Authentication: required; NOT AUTHENTICATED")) << out;
    EXPECT_TRUE(contains(out, "set ZEUSD_TOKEN")) << out;

    out = run("ZEUSD_HOST_PORT=localhost", "", rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_TRUE(contains(out, "ZEUSD_HOST_PORT=\"localhost\" has no port")) << out;
}

TEST_F(ZeusdShowEnv, NotConfiguredSaysSo) {
    int rc = -1;
    const std::string json = run("", "--format json", rc);
    ASSERT_EQ(rc, 0) << json;
    EXPECT_TRUE(nlohmann::json::parse(json)["zeusd"].is_null());
    const std::string text = run("", "", rc);
    EXPECT_TRUE(contains(text, "Not configured")) << text;
}

}  // namespace
}  // namespace zeus
