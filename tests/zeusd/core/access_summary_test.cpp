// The first line zeusd logs says who may use it.
#include "zeusd/access_summary.hpp"

#include <gtest/gtest.h>

#include <string>

namespace zeus::zeusd {
namespace {

const ApiGroups kDefaultGroups{ApiGroup::GpuControl, ApiGroup::GpuRead, ApiGroup::CpuRead};

bool says(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

TEST(AccessSummary, AWorldWritableSocketSaysEveryUserMayControlGpus) {
    ServeConfig config;
    config.socket_permissions = 0666;
    const std::string line = access_summary(config, kDefaultGroups, false);
    EXPECT_TRUE(says(line, "every local user (socket mode 666)")) << line;
    EXPECT_TRUE(says(line, "any user may change any GPU's power limit")) << line;
    EXPECT_TRUE(says(line, "--socket-permissions 660 --socket-gid zeus")) << line;
}

TEST(AccessSummary, AGroupSocketNamesTheGroupAndNoWarning) {
    ServeConfig config;
    config.socket_permissions = 0660;
    config.socket_gid = 0;  // root's group exists everywhere
    const std::string line = access_summary(config, kDefaultGroups, false);
    EXPECT_FALSE(says(line, "every local user")) << line;
    EXPECT_TRUE(says(line, "members of group '")) << line;
    EXPECT_TRUE(says(line, "(gid 0)")) << line;
    EXPECT_FALSE(says(line, "any user may change")) << line;
}

TEST(AccessSummary, ControlAllowListsAreNamed) {
    ServeConfig config;
    config.control_groups = {0};
    const std::string line = access_summary(config, kDefaultGroups, false);
    EXPECT_TRUE(says(line, "GPU control only for members of group")) << line;
    EXPECT_FALSE(says(line, "any user may change")) << line;
}

TEST(AccessSummary, ReadOnlyGroupsWarnOfNothing) {
    ServeConfig config;
    const std::string line = access_summary(config, ApiGroups{ApiGroup::GpuRead}, false);
    EXPECT_TRUE(says(line, "may use gpu-read")) << line;
    EXPECT_FALSE(says(line, "any user may change")) << line;
}

TEST(AccessSummary, TcpWithATokenSaysSo) {
    ServeConfig config;
    config.mode = ListenMode::Tcp;
    config.tcp_bind_address = "127.0.0.1:4938";
    const std::string line = access_summary(config, kDefaultGroups, true);
    EXPECT_TRUE(says(line, "anyone who can reach 127.0.0.1:4938, holding a token")) << line;
}

}  // namespace
}  // namespace zeus::zeusd
