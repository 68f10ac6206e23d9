#include "zeus/platform/listening_address.hpp"

#include <gtest/gtest.h>

#include "zeus/device/zeusd_client.hpp"

namespace zeus {
namespace {

TEST(ListeningAddress, NamesTheBoundPortInsteadOfTheRequestedOne) {
    EXPECT_EQ(listening_address("127.0.0.1:0", 43210), "127.0.0.1:43210");
    EXPECT_EQ(listening_address("0.0.0.0:0", 1), "0.0.0.0:1");
    EXPECT_EQ(listening_address("[::1]:0", 65535), "[::1]:65535");
}

TEST(ListeningAddress, AFixedPortIsPrintedAsGiven) {
    EXPECT_EQ(listening_address("127.0.0.1:4938", 4938), "127.0.0.1:4938");
    EXPECT_EQ(listening_address("[::]:9466", 9466), "[::]:9466");
}

TEST(ListeningAddress, IPv6HostsAreBracketedEvenWhenGivenWithout) {
    // listen_tcp takes the port after the last colon, so "::1:0" is [::1] port 0.
    EXPECT_EQ(listening_address("::1:0", 4938), "[::1]:4938");
    EXPECT_EQ(listening_address("fe80::1%2:0", 80), "[fe80::1%2]:80");
}

// What a server prints is what a client is told to use: ZEUSD_HOST_PORT
// reads it back as the same host and the bound port.
TEST(ListeningAddress, ReadsBackAsTheSameHostAndPort) {
    struct Case {
        const char* requested;
        const char* host;
    };
    for (const Case& c : {Case{"127.0.0.1:0", "127.0.0.1"}, Case{"[::1]:0", "::1"}, Case{"::1:0", "::1"},
                          Case{"10.1.2.3:8000", "10.1.2.3"}}) {
        const unsigned short port = 50123;
        const auto parsed = parse_zeusd_host_port(listening_address(c.requested, port));
        ASSERT_TRUE(parsed) << c.requested << ": " << parsed.error().describe();
        EXPECT_EQ(parsed->host, c.host) << c.requested;
        EXPECT_EQ(parsed->port, port) << c.requested;
    }
}

}  // namespace
}  // namespace zeus
