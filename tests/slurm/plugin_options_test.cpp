// The plugstack.conf words of zeus_slurm: defaults, each option, and an error
// naming the word and the fix for every kind of mistake.
#include <gtest/gtest.h>

#include <fstream>

#include "slurm/plugin_options.hpp"
#include "support/test_directory.hpp"

namespace zeus::slurm {
namespace {

TEST(SlurmPluginOptions, DefaultsReadZeusdsDefaultSocketIntoTheSystemSpool) {
    const auto options = parse_plugin_options({});
    ASSERT_TRUE(options.ok()) << options.error().describe();
    EXPECT_EQ(options->spool, "/var/spool/zeus-slurm");
    EXPECT_EQ(options->zeusd.endpoint(), "unix:/run/zeusd/zeusd.sock");
    EXPECT_TRUE(options->stderr_line);
    EXPECT_FALSE(options->zeusd.token.has_value());
    // A wedged daemon holds a job's end for seconds, not zeusd's 15 s default.
    EXPECT_EQ(options->zeusd.read_timeout, kZeusdTimeout);
}

TEST(SlurmPluginOptions, EachOptionIsApplied) {
    const auto tcp = parse_plugin_options({"spool=/srv/energy", "zeusd=127.0.0.1:4938", "stderr=no"});
    ASSERT_TRUE(tcp.ok()) << tcp.error().describe();
    EXPECT_EQ(tcp->spool, "/srv/energy");
    EXPECT_EQ(tcp->zeusd.endpoint(), "127.0.0.1:4938");
    EXPECT_FALSE(tcp->stderr_line);
    for (const std::string word : {"zeusd=unix:/tmp/z.sock", "zeusd=/tmp/z.sock"}) {
        const auto socket = parse_plugin_options({word});
        ASSERT_TRUE(socket.ok()) << socket.error().describe();
        EXPECT_EQ(socket->zeusd.endpoint(), "unix:/tmp/z.sock") << word;
    }
}

TEST(SlurmPluginOptions, TheTokenFileIsReadWithoutItsNewline) {
    zeus::testing::TestDirectory dir;
    const auto path = (dir.path() / "token").string();
    std::ofstream(path) << "abc.def.ghi\n";
    const auto options = parse_plugin_options({"token_file=" + path});
    ASSERT_TRUE(options.ok()) << options.error().describe();
    EXPECT_EQ(options->zeusd.token, "abc.def.ghi");
    const auto missing = parse_plugin_options({"token_file=" + path + ".missing"});
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().describe().find("token_file="), std::string::npos) << missing.error().describe();
}

// An empty token file would send no token: every reading would fail at the
// job's end with a 401 instead of now, naming the file.
TEST(SlurmPluginOptions, AnEmptyTokenFileIsAMistake) {
    zeus::testing::TestDirectory dir;
    const auto path = (dir.path() / "token").string();
    std::ofstream(path) << "\n";
    const auto options = parse_plugin_options({"token_file=" + path});
    ASSERT_FALSE(options.ok());
    EXPECT_NE(options.error().describe().find("\"token_file=" + path + "\" in plugstack.conf names an empty file"),
              std::string::npos)
        << options.error().describe();
}

TEST(SlurmPluginOptions, EveryMistakeNamesTheWordAndTheFix) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"colour=blue", "is not an option of this plugin"},
        {"spool", "has no value"},
        {"spool=", "has an empty value"},
        {"spool=relative/dir", "is not an absolute path"},
        {"zeusd=localhost", "names neither a socket path nor a host:port"},
        {"zeusd=127.0.0.1:99999", "names neither a socket path nor a host:port"},
        {"stderr=maybe", "is neither yes nor no"},
        // unix: takes a socket path only: a host:port after it is no TCP address.
        {"zeusd=unix:127.0.0.1:4938", "names no absolute socket path after unix:"},
        {"zeusd=unix:run/zeusd.sock", "names no absolute socket path after unix:"},
        {"spool=/srv/other", "gives spool= a second time"},
    };
    for (const auto& [word, problem] : cases) {
        const auto options = parse_plugin_options({"spool=/srv/energy", word});
        ASSERT_FALSE(options.ok()) << word;
        const auto text = options.error().describe();
        EXPECT_EQ(options.error().code, ErrorCode::InvalidConfig) << text;
        EXPECT_NE(text.find("\"" + word + "\""), std::string::npos) << text;
        EXPECT_NE(text.find(problem), std::string::npos) << text;
        EXPECT_NE(text.find("options: spool=DIR"), std::string::npos) << text;
    }
}

}  // namespace
}  // namespace zeus::slurm
