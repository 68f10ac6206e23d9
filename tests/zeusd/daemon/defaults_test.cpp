// `zeusd serve`'s defaults are said in three places: ServeDefaults (what the
// daemon uses), `zeusd serve --help` and docs/zeusd.md's flag table. They
// must agree; this reads the other two and compares them with the first.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "zeus/zeusd/commands.hpp"
#include "zeusd_harness.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

using zeus::zeusd::ServeDefaults;

// Flag -> default text, from ServeDefaults (num-workers: its meaning, 0 is no count).
std::map<std::string, std::string> expected_defaults() {
    static_assert(ServeDefaults::num_workers == 0, "the texts below say what 0 means");
    return {
        {"--mode", std::string(ServeDefaults::mode)},
        {"--socket-path", std::string(ServeDefaults::socket_path)},
        {"--socket-permissions", std::string(ServeDefaults::socket_permissions)},
        {"--tcp-bind-address", std::string(ServeDefaults::tcp_bind_address)},
        {"--num-workers", "2 x logical CPUs"},
        {"--gpu-power-poll-hz", fmt::format("{}", ServeDefaults::gpu_power_poll_hz)},
        {"--cpu-power-poll-hz", fmt::format("{}", ServeDefaults::cpu_power_poll_hz)},
        {"--gpu-backend", std::string(ServeDefaults::gpu_backend)},
        {"--request-timeout-s", fmt::format("{}", ServeDefaults::request_timeout_s)},
        {"--max-connections-per-peer", std::to_string(ServeDefaults::max_connections_per_peer)},
        {"--max-streams-per-peer", std::to_string(ServeDefaults::max_streams_per_peer)},
        {"--max-queued-events", std::to_string(ServeDefaults::max_queued_events)},
        {"--control-policy", std::string(ServeDefaults::control_policy)},
        {"--proc", std::string(ServeDefaults::proc_root)},
        {"--idle-policy", std::string(ServeDefaults::idle_policy)},
        {"--attribution-expiry", fmt::format("{}", ServeDefaults::attribution_expiry_s)},
    };
}

TEST(ZeusdDefaults, HelpSaysServeDefaults) {
    const auto [status, help] = run_zeusd({"serve", "--help"});
    ASSERT_EQ(status, 0) << help;
    for (const auto& [flag, value] : expected_defaults()) {
        if (flag == "--num-workers") {
            EXPECT_NE(help.find("(default: " + value + ")"), std::string::npos) << help;
            continue;
        }
        // CLI11: "--flag TYPE[:CHECK]=DEFAULT" at the start of the flag's line.
        const std::regex line("\n +" + flag + " [^\n=]*=([^ \n]+)");
        std::smatch match;
        ASSERT_TRUE(std::regex_search(help, match, line)) << flag << " has no default in:\n" << help;
        EXPECT_EQ(match[1].str(), value) << flag;
    }
}

TEST(ZeusdDefaults, DocsSayServeDefaults) {
    std::ifstream in(zeus::testing::source_dir() + "/docs/zeusd.md");
    ASSERT_TRUE(in) << "docs/zeusd.md";
    std::stringstream text;
    text << in.rdbuf();
    const std::string docs = text.str();
    for (const auto& [flag, value] : expected_defaults()) {
        // "| `--flag` | DEFAULT | meaning |", the default in backticks or not.
        const std::regex row("\n\\| `" + flag + "` \\| `?([^`|]*[^`| ])`? \\|");
        std::smatch match;
        ASSERT_TRUE(std::regex_search(docs, match, row)) << flag << " has no row in docs/zeusd.md's flag table";
        EXPECT_EQ(match[1].str(), value) << flag;
    }
}

// Every number flag of `zeusd serve` (FLOAT in its --help) refuses NaN while
// parsing, naming the flag: CLI11's Range lets NaN through (every comparison
// with it is false), and a NaN rate or timeout reaches a double-to-integer
// conversion, which is undefined.
TEST(ZeusdDefaults, NumberFlagsRefuseNan) {
    const auto [status, help] = run_zeusd({"serve", "--help"});
    ASSERT_EQ(status, 0) << help;
    const std::regex float_flag("\n +(--[a-z0-9-]+) FLOAT");
    std::vector<std::string> flags;
    for (auto it = std::sregex_iterator(help.begin(), help.end(), float_flag); it != std::sregex_iterator(); ++it) {
        flags.push_back((*it)[1].str());
    }
    ASSERT_GE(flags.size(), 4U) << help;
    const auto socket = std::filesystem::temp_directory_path() / fmt::format("zeusd-nan-{}.sock", ::getpid());
    for (const auto& flag : flags) {
        for (const std::string value : {"nan", "NaN", "-nan"}) {
            const auto [code, output] = run_zeusd(
                {"serve", "--socket-path", socket.string(), "--enable", "metrics", "--attribution", flag, value},
                {{"ZEUS_SIMULATE", "1"}}, std::chrono::seconds(5));
            EXPECT_GT(code, 0) << flag << " " << value << " was accepted:\n" << output;
            EXPECT_NE(output.find(flag), std::string::npos) << output;
            EXPECT_NE(output.find("finite"), std::string::npos) << flag << " " << value << ": " << output;
        }
    }
}

// --idle-policy and --attribution-expiry without --attribution are a
// forgotten flag: refused, not ignored (no per-workload series would be served).
TEST(ZeusdDefaults, AttributionOptionsNeedAttribution) {
    const auto socket = std::filesystem::temp_directory_path() / fmt::format("zeusd-needs-{}.sock", ::getpid());
    for (const std::vector<std::string>& option : {std::vector<std::string>{"--idle-policy", "allocation"},
                                                   {"--attribution-expiry", "60"},
                                                   {"--kubelet-socket", "none"},
                                                   {"--kubelet-timeout", "2"}}) {
        const auto [code, output] =
            run_zeusd({"serve", "--socket-path", socket.string(), "--enable", "metrics", option[0], option[1]},
                      {{"ZEUS_SIMULATE", "1"}}, std::chrono::seconds(5));
        EXPECT_GT(code, 0) << option[0] << " was accepted:\n" << output;
        EXPECT_NE(output.find(option[0] + " requires --attribution"), std::string::npos) << output;
    }
}

}  // namespace
}  // namespace zeus::testing
