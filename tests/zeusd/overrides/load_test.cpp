// Loading the override file: the format, every load error, and file trust.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_files.hpp"
#include "zeusd/overrides/command_overrides.hpp"

namespace zeus::zeusd {
namespace {

using testing::load_text;
using testing::TempDir;

// Loads `toml`, expects an InvalidConfig error, and returns its message.
std::string load_error(const std::string& toml) {
    const TempDir dir;
    const auto loaded = load_text(dir, toml);
    EXPECT_FALSE(loaded.ok()) << toml;
    if (loaded.ok()) return {};
    EXPECT_EQ(loaded.error().code, ErrorCode::InvalidConfig) << loaded.error().message;
    // Every content error names the file.
    EXPECT_NE(loaded.error().message.find(dir.file("overrides.toml")), std::string::npos) << loaded.error().message;
    return loaded.error().message;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(OverridesLoad, AllTablesAndFields) {
    const TempDir dir;
    const auto loaded = load_text(dir, R"(
reset_locked_clocks = { commands = ["control {gpu_id}"], timeout_s = 7 }

[set_persistence_mode]
commands = ["control --gpu={gpu_id} --enabled={enabled}"]
error_pattern = "(?i)error"
timeout_s = 1

[set_power_limit]
commands = ["control {gpu_id} {power_limit_mw}", "control {power_limit_w}"]
error_pattern = "failed"
timeout_s = 2

[set_gpu_locked_clocks]
commands = ["control {gpu_id} {min_clock_mhz} {max_clock_mhz}"]

[reset_gpu_locked_clocks]
commands = ["control {gpu_id}"]

[set_mem_locked_clocks]
commands = ["control {gpu_id} {min_clock_mhz} {max_clock_mhz}"]

[reset_mem_locked_clocks]
commands = ["control {gpu_id}"]
)");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_FALSE(loaded->empty());
    EXPECT_EQ(loaded->overridden(), std::vector<GpuCommand>(kAllGpuCommands.begin(), kAllGpuCommands.end()));
    for (const auto command : kAllGpuCommands) EXPECT_TRUE(loaded->has(command)) << to_string(command);
    EXPECT_TRUE(loaded->warnings().empty());
}

TEST(OverridesLoad, EmptyFileAndFileWithoutTablesMeanNoOverrides) {
    for (const auto* text : {"", "# only a comment\n\n"}) {
        const TempDir dir;
        const auto loaded = load_text(dir, text);
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        EXPECT_TRUE(loaded->empty());
        EXPECT_TRUE(loaded->overridden().empty());
        EXPECT_FALSE(loaded->has(GpuCommand::SetPowerLimit));
    }
    EXPECT_TRUE(CommandOverrides().empty());
}

TEST(OverridesLoad, OnlyConfiguredCommandsAreOverridden) {
    const TempDir dir;
    const auto loaded = load_text(dir, "[set_power_limit]\ncommands = ['control {power_limit_w}']\n");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_TRUE(loaded->has(GpuCommand::SetPowerLimit));
    EXPECT_FALSE(loaded->has(GpuCommand::ResetLockedClocks));
    EXPECT_EQ(loaded->overridden(), std::vector<GpuCommand>{GpuCommand::SetPowerLimit});
}

TEST(OverridesLoad, RejectsUnknownTable) {
    const auto message = load_error("[set_fan_speed]\ncommands = ['control {gpu_id}']\n");
    EXPECT_CONTAINS(message, "unknown table 'set_fan_speed'");
    EXPECT_CONTAINS(message, "set_persistence_mode, set_power_limit");  // the valid ones
    EXPECT_CONTAINS(load_error("timeout_s = 5\n"), "unknown table 'timeout_s'");
}

TEST(OverridesLoad, RejectsTableThatIsNotATable) {
    EXPECT_CONTAINS(load_error("set_power_limit = 'control'\n"), "'set_power_limit' (line 1) must be a table");
}

TEST(OverridesLoad, RejectsUnknownKey) {
    const auto message = load_error("[set_power_limit]\ncommands = ['control']\nworking_dir = '/tmp'\n");
    EXPECT_CONTAINS(message, "table 'set_power_limit' (line 3) has unknown key 'working_dir'");
    EXPECT_CONTAINS(message, "valid keys: commands, error_pattern, timeout_s");
}

TEST(OverridesLoad, RejectsMissingEmptyOrMistypedCommands) {
    EXPECT_CONTAINS(load_error("[set_power_limit]\ntimeout_s = 3\n"), "lacks 'commands'");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = []\n"),
                    "has an empty commands array");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = 'control'\n"), "not an array of strings");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control', 5]\n"), "element that is not a string");
}

TEST(OverridesLoad, RejectsBadTimeouts) {
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control']\ntimeout_s = 0\n"), "timeout_s = 0");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control']\ntimeout_s = -4\n"), "timeout_s = -4");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control']\ntimeout_s = 1.5\n"), "not an integer");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control']\ntimeout_s = '5'\n"), "not an integer");
}

TEST(OverridesLoad, RejectsBadErrorPattern) {
    const auto message = load_error("[set_power_limit]\ncommands = ['control']\nerror_pattern = '['\n");
    EXPECT_CONTAINS(message, "table 'set_power_limit' (line 3) has an invalid error_pattern '['");
    EXPECT_CONTAINS(load_error("[set_power_limit]\ncommands = ['control']\nerror_pattern = 3\n"),
                    "error_pattern that is not a string");
}

TEST(OverridesLoad, RejectsUnknownPlaceholderNamingTableCommandAndPlaceholder) {
    const auto message = load_error("[set_power_limit]\ncommands = ['control --value={max_clock_mhz}']\n");
    EXPECT_CONTAINS(message, "table 'set_power_limit'");
    EXPECT_CONTAINS(message, "command 'control --value={max_clock_mhz}'");
    EXPECT_CONTAINS(message, "unknown placeholder '{max_clock_mhz}'");
    // Placeholders of another command are unknown too.
    EXPECT_CONTAINS(load_error("[reset_locked_clocks]\ncommands = ['control {enabled}']\n"),
                    "unknown placeholder '{enabled}'");
}

TEST(OverridesLoad, RejectsUnbalancedBraces) {
    for (const std::string word : {"value}", "{gpu_id", "{{gpu_id}"}) {
        const auto message = load_error("[reset_locked_clocks]\ncommands = ['control " + word + "']\n");
        EXPECT_CONTAINS(message, "reset_locked_clocks");
        EXPECT_CONTAINS(message, "unbalanced brace");
        EXPECT_CONTAINS(message, "word '" + word + "'");
    }
}

TEST(OverridesLoad, RejectsUnbalancedQuoteAndEmptyCommand) {
    EXPECT_CONTAINS(load_error("[reset_locked_clocks]\ncommands = [\"control 'oops\"]\n"), "cannot be split");
    EXPECT_CONTAINS(load_error("[reset_locked_clocks]\ncommands = ['  ']\n"), "zero tokens");
}

TEST(OverridesLoad, RejectsInvalidToml) {
    EXPECT_CONTAINS(load_error("[set_power_limit\ncommands = ['x']\n"), "invalid TOML");
}

TEST(OverridesLoad, MissingFileIsNotFound) {
    const TempDir dir;
    const auto loaded = CommandOverrides::load(dir.file("absent.toml"), ::geteuid());
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().code, ErrorCode::NotFound);
    EXPECT_CONTAINS(loaded.error().message, dir.file("absent.toml"));
}

TEST(OverridesLoad, DirectoryIsRejected) {
    const TempDir dir;
    const auto loaded = CommandOverrides::load(dir.path(), ::geteuid());
    ASSERT_FALSE(loaded.ok());
    EXPECT_CONTAINS(loaded.error().message, "is a directory");
}

TEST(OverridesTrust, WorldWritableIsRefused) {
    const TempDir dir;
    const auto path = dir.file("overrides.toml");
    testing::write_file(path, "[reset_locked_clocks]\ncommands = ['control']\n", 0666);
    const auto loaded = CommandOverrides::load(path, ::geteuid());
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().code, ErrorCode::InvalidConfig);
    EXPECT_CONTAINS(loaded.error().message, "world-writable (mode 666)");
    EXPECT_CONTAINS(loaded.error().message, path);
}

TEST(OverridesTrust, GroupWritableLoadsWithAWarning) {
    const TempDir dir;
    const auto path = dir.file("overrides.toml");
    testing::write_file(path, "[reset_locked_clocks]\ncommands = ['control']\n", 0664);
    const auto loaded = CommandOverrides::load(path, ::geteuid());
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    ASSERT_EQ(loaded->warnings().size(), 1U);
    EXPECT_CONTAINS(loaded->warnings()[0], "group-writable (mode 664)");
    EXPECT_CONTAINS(loaded->warnings()[0], path);
}

TEST(OverridesTrust, OwnerMustBeRootOrTheDaemon) {
    const TempDir dir;
    const auto path = dir.file("overrides.toml");
    testing::write_file(path, "[reset_locked_clocks]\ncommands = ['control']\n", 0644);
    if (::geteuid() != 0) GTEST_SKIP() << "changing a file's owner needs root";
    constexpr uid_t kStranger = 4242;
    ASSERT_EQ(::chown(path.c_str(), kStranger, static_cast<gid_t>(-1)), 0);

    // Root (euid 0) does not own it: refused, whoever the daemon is.
    const auto refused = CommandOverrides::load(path, 0);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::InvalidConfig);
    EXPECT_CONTAINS(refused.error().message, "owned by uid 4242");
    EXPECT_CONTAINS(refused.error().message, "(uid 0)");

    // Owned by the daemon's own euid: accepted.
    const auto accepted = CommandOverrides::load(path, kStranger);
    EXPECT_TRUE(accepted.ok()) << accepted.error().describe();

    // Owned by root: accepted for any daemon euid.
    ASSERT_EQ(::chown(path.c_str(), 0, static_cast<gid_t>(-1)), 0);
    EXPECT_TRUE(CommandOverrides::load(path, kStranger).ok());
}

}  // namespace
}  // namespace zeus::zeusd
