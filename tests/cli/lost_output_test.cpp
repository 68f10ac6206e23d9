// A report that cannot be written (a full disk; /dev/full stands in for one)
// is an error naming where it was to go, never a silent success
// (docs/cli.md: exit 1 for power and energy; zeus run keeps the command's
// failure code, 125 otherwise).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/command_output.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

const std::string kZeus = zeus::testing::zeus_cli_path();

TEST(LostOutput, EnergyToAFullOutputFileFailsNamingIt) {
    const auto r = capture_separately(kZeus + " energy --simulate --duration 0.1 --output /dev/full");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write the report to --output /dev/full: No space left on device"), std::string::npos)
        << r.err;
}

TEST(LostOutput, EnergyToAFullStandardOutputFailsNamingIt) {
    for (const char* format : {"human", "json", "csv"}) {
        const auto r = capture_separately(kZeus + " energy --simulate --duration 0.1 --format " + format + " > /dev/full");
        EXPECT_EQ(r.exit_code, 1) << format << ": " << r.err;
        EXPECT_NE(r.err.find("cannot write the report to standard output"), std::string::npos) << format << ": " << r.err;
    }
}

TEST(LostOutput, RunKeepsTheCommandsFailureElse125) {
    auto r = capture_separately(kZeus + " run --simulate --output /dev/full -- true");
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_NE(r.err.find("the command ran, but cannot write the report to --output /dev/full"), std::string::npos)
        << r.err;
    r = capture_separately(kZeus + " run --simulate --output /dev/full -- sh -c 'exit 3'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("--output /dev/full"), std::string::npos) << r.err;
}

TEST(LostOutput, PowerStopsAtTheFirstRowItCannotWrite) {
    const auto started = std::chrono::steady_clock::now();
    const auto r = capture_separately("timeout 60 " + kZeus +
                                      " power --simulate --interval 0.1 --duration 30 --format csv --output /dev/full");
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write the report to --output /dev/full"), std::string::npos) << r.err;
    EXPECT_LT(took, std::chrono::seconds(10)) << "kept measuring for nobody";
}

}  // namespace
}  // namespace zeus::testing
