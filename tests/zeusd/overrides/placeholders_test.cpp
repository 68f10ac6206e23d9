#include <gtest/gtest.h>

#include "zeusd/overrides/placeholders.hpp"

namespace zeus::zeusd {
namespace {

TEST(Placeholders, EachCommandAllowsItsOwn) {
    EXPECT_FALSE(check_placeholders(GpuCommand::SetPowerLimit, "--gpu={gpu_id}:{power_limit_mw}:{power_limit_w}"));
    EXPECT_FALSE(check_placeholders(GpuCommand::SetGpuLockedClocks, "{gpu_id},{min_clock_mhz},{max_clock_mhz}"));
    EXPECT_FALSE(check_placeholders(GpuCommand::SetMemLockedClocks, "{min_clock_mhz}-{max_clock_mhz}"));
    EXPECT_FALSE(check_placeholders(GpuCommand::SetPersistenceMode, "-pm={enabled}@{gpu_id}"));
    EXPECT_FALSE(check_placeholders(GpuCommand::ResetLockedClocks, "{gpu_id}"));
    EXPECT_FALSE(check_placeholders(GpuCommand::ResetLockedClocks, "no placeholders"));
}

TEST(Placeholders, OthersAreUnknown) {
    const auto problem = check_placeholders(GpuCommand::SetPowerLimit, "--value={max_clock_mhz}");
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("unknown placeholder '{max_clock_mhz}'"), std::string::npos) << *problem;
    EXPECT_NE(problem->find("{power_limit_w}"), std::string::npos) << "lists the valid ones: " << *problem;
    EXPECT_TRUE(check_placeholders(GpuCommand::ResetGpuLockedClocks, "{power_limit_mw}"));
    EXPECT_TRUE(check_placeholders(GpuCommand::SetPowerLimit, "{enabled}"));
    EXPECT_TRUE(check_placeholders(GpuCommand::SetPowerLimit, "{GPU_ID}"));
}

TEST(Placeholders, UnbalancedBracesAreErrors) {
    for (const auto* word : {"value}", "{gpu_id", "{{gpu_id}", "{gpu_id}}", "{}", "a{b{gpu_id}}"}) {
        EXPECT_TRUE(check_placeholders(GpuCommand::ResetLockedClocks, word)) << word;
    }
}

TEST(Placeholders, SubstitutesValues) {
    CommandArguments power;
    power.gpu_id = 3;
    power.power_limit_mw = 253'999;
    EXPECT_EQ(substitute_placeholders("--gpu={gpu_id}:{power_limit_mw}:{power_limit_w}", power).value(),
              "--gpu=3:253999:253");

    CommandArguments clocks;
    clocks.gpu_id = 4;
    clocks.min_clock_mhz = 500;
    clocks.max_clock_mhz = 1700;
    EXPECT_EQ(substitute_placeholders("{gpu_id}:{min_clock_mhz}:{max_clock_mhz}", clocks).value(), "4:500:1700");

    CommandArguments persistence;
    persistence.gpu_id = 5;
    persistence.enabled = true;
    EXPECT_EQ(substitute_placeholders("{gpu_id}:{enabled}", persistence).value(), "5:1");
    persistence.enabled = false;
    EXPECT_EQ(substitute_placeholders("{enabled}", persistence).value(), "0");
    EXPECT_EQ(substitute_placeholders("plain", persistence).value(), "plain");
}

TEST(Placeholders, MissingValueIsAnError) {
    CommandArguments arguments;
    arguments.gpu_id = 1;
    const auto result = substitute_placeholders("{gpu_id}:{power_limit_w}", arguments);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(result.error().message.find("{power_limit_w}"), std::string::npos);
}

}  // namespace
}  // namespace zeus::zeusd
