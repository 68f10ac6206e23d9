// ZeusdConfig::from_environment: which variable wins, and that every bad
// value is an error naming the variable and the fix.
#include <gtest/gtest.h>

#include <cstdlib>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus {
namespace {

class ZeusdEnvironment : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const char* name : {"ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"}) unsetenv(name);
    }
};

TEST_F(ZeusdEnvironment, NothingSetMeansNoDaemon) {
    auto config = ZeusdConfig::from_environment();
    ASSERT_TRUE(config.ok());
    EXPECT_FALSE(config->has_value());
    setenv("ZEUSD_SOCK_PATH", "", 1);  // empty counts as unset
    setenv("ZEUSD_TOKEN", "t", 1);     // a token alone selects no daemon
    EXPECT_FALSE(ZeusdConfig::from_environment()->has_value());
}

TEST_F(ZeusdEnvironment, SocketPathWinsOverHostPort) {
    setenv("ZEUSD_SOCK_PATH", "/run/zeusd/zeusd.sock", 1);
    setenv("ZEUSD_HOST_PORT", "127.0.0.1:4938", 1);
    setenv("ZEUSD_TOKEN", "abc.def.ghi", 1);
    auto config = ZeusdConfig::from_environment();
    ASSERT_TRUE(config.ok()) << config.error().describe();
    ASSERT_TRUE(config->has_value());
    const ZeusdConfig& c = **config;
    EXPECT_EQ(c.transport, ZeusdConfig::Transport::UnixSocket);
    EXPECT_EQ(c.socket_path, "/run/zeusd/zeusd.sock");
    EXPECT_EQ(c.token, "abc.def.ghi");
    EXPECT_EQ(c.endpoint(), "unix:/run/zeusd/zeusd.sock");
}

TEST_F(ZeusdEnvironment, HostPortForms) {
    setenv("ZEUSD_HOST_PORT", "gpu-node-3:4938", 1);
    auto config = ZeusdConfig::from_environment();
    ASSERT_TRUE(config.ok()) << config.error().describe();
    EXPECT_EQ((*config)->transport, ZeusdConfig::Transport::Tcp);
    EXPECT_EQ((*config)->host, "gpu-node-3");
    EXPECT_EQ((*config)->port, 4938);
    EXPECT_FALSE((*config)->token.has_value());

    auto v6 = parse_zeusd_host_port("[::1]:80");
    ASSERT_TRUE(v6.ok()) << v6.error().describe();
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->endpoint(), "[::1]:80");
}

TEST_F(ZeusdEnvironment, MalformedHostPortNamesTheVariableAndTheFix) {
    for (const char* bad : {"localhost", "localhost:", ":4938", "localhost:http", "localhost:0", "localhost:70000",
                            "::1:4938", "[::1]4938", "[::1", "http://localhost:4938"}) {
        setenv("ZEUSD_HOST_PORT", bad, 1);
        auto config = ZeusdConfig::from_environment();
        ASSERT_FALSE(config.ok()) << bad;
        EXPECT_EQ(config.error().code, ErrorCode::InvalidConfig) << bad;
        EXPECT_NE(config.error().message.find("ZEUSD_HOST_PORT=\"" + std::string(bad) + "\""), std::string::npos)
            << config.error().message;
        EXPECT_NE(config.error().hint.find("127.0.0.1:4938"), std::string::npos) << config.error().hint;
    }
}

TEST_F(ZeusdEnvironment, TooLongSocketPathAndMultiLineTokenAreErrors) {
    setenv("ZEUSD_SOCK_PATH", ("/tmp/" + std::string(200, 'x')).c_str(), 1);
    auto config = ZeusdConfig::from_environment();
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("ZEUSD_SOCK_PATH"), std::string::npos);
    unsetenv("ZEUSD_SOCK_PATH");
    setenv("ZEUSD_HOST_PORT", "localhost:1", 1);
    setenv("ZEUSD_TOKEN", "a\nb", 1);
    config = ZeusdConfig::from_environment();
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("ZEUSD_TOKEN"), std::string::npos);
}

TEST_F(ZeusdEnvironment, DeviceOptionsCarryTheDaemonAndItsErrors) {
    setenv("ZEUSD_HOST_PORT", "127.0.0.1:4938", 1);
    auto gpu = GpuOptions::from_environment();
    ASSERT_TRUE(gpu.ok());
    ASSERT_TRUE(gpu->zeusd.has_value());
    EXPECT_EQ(gpu->zeusd->port, 4938);
    auto cpu = CpuOptions::from_environment();
    ASSERT_TRUE(cpu.ok());
    ASSERT_TRUE(cpu->zeusd.has_value());

    setenv("ZEUSD_HOST_PORT", "nonsense", 1);
    EXPECT_FALSE(GpuOptions::from_environment().ok());
    EXPECT_FALSE(CpuOptions::from_environment().ok());
}

}  // namespace
}  // namespace zeus
