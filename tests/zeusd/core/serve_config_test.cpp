// Where zeusd keeps its restore ledger when --restore-ledger is not given.
#include "zeusd/serve_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace zeus::zeusd {
namespace {

class DefaultLedgerPath : public ::testing::Test {
  protected:
    void SetUp() override { ::setenv("RUNTIME_DIRECTORY", "/run/zeusd-test", 1); }
    void TearDown() override { ::unsetenv("RUNTIME_DIRECTORY"); }

    static std::string for_tcp(const std::string& address) {
        ServeConfig config;
        config.mode = ListenMode::Tcp;
        config.tcp_bind_address = address;
        return default_ledger_path(config);
    }
};

TEST_F(DefaultLedgerPath, NextToTheSocket) {
    ServeConfig config;
    config.socket_path = "/run/zeusd/zeusd.sock";
    EXPECT_EQ(default_ledger_path(config), "/run/zeusd/zeusd.sock.ledger.json");
}

// A successor on the same address finds what a crashed zeusd left.
TEST_F(DefaultLedgerPath, TcpIsNamedByThePort) {
    EXPECT_EQ(for_tcp("127.0.0.1:4938"), "/run/zeusd-test/zeusd-tcp-4938.ledger.json");
    EXPECT_EQ(for_tcp("[::1]:4938"), "/run/zeusd-test/zeusd-tcp-4938.ledger.json");
}

// On port 0 the port says nothing: each daemon has its own file, so one
// starting up never undoes the changes of another that is running.
TEST_F(DefaultLedgerPath, PortZeroIsNamedByTheProcess) {
    const std::string own = "/run/zeusd-test/zeusd-tcp-0-pid" + std::to_string(::getpid()) + ".ledger.json";
    EXPECT_EQ(for_tcp("127.0.0.1:0"), own);
    EXPECT_EQ(for_tcp("[::1]:00"), own);
    EXPECT_EQ(for_tcp("127.0.0.1:10"), "/run/zeusd-test/zeusd-tcp-10.ledger.json");
}

}  // namespace
}  // namespace zeus::zeusd
