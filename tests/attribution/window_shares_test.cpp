// WindowShares where the driver gives no process data (a backend without
// GpuProcessQuery: AMD SMI, the fakes) and for a GPU lost in the window: the
// share is unknown, never a silent 0, and the window's energy is all in the
// remainder. No simulator: the Measurement is made by hand.
#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "zeus/attribution/window_shares.hpp"

namespace zeus::attribution {
namespace {

Measurement window_of(std::map<unsigned, EnergyValue> values) {
    Measurement m;
    m.time = Seconds(2.0);
    m.gpu_energy = std::move(values);
    return m;
}

EnergyValue joules(double j) {
    EnergyValue value;
    value.energy = Joules(j);
    return value;
}

WindowSharesOptions edges_only() {
    WindowSharesOptions options;
    options.poll_period = std::chrono::milliseconds(0);
    return options;
}

TEST(WindowSharesTest, WithoutProcessDataTheShareIsUnknownAndSaysWhy) {
    Gpus gpus = zeus::testing::fake_gpus(1);
    auto shares = WindowShares::open(gpus, {0}, edges_only()).value();
    shares->begin("w");
    const auto split = shares->end("w", window_of({{0U, joules(12.3456)}})).value();
    const WindowShare& share = split.at(0);
    EXPECT_FALSE(share.known);
    EXPECT_FALSE(share.method.has_value());
    EXPECT_EQ(share.gpu_mj, 12'346);
    EXPECT_EQ(share.share_mj, 0);
    EXPECT_EQ(share.remainder.no_process_mj, share.gpu_mj);
    ASSERT_FALSE(share.warnings.empty());
    EXPECT_NE(share.warnings.front().find("no process data"), std::string::npos) << share.warnings.front();
}

TEST(WindowSharesTest, AGpuLostInTheWindowHasNoShare) {
    Gpus gpus = zeus::testing::fake_gpus(2);
    auto shares = WindowShares::open(gpus, {0, 1}, edges_only()).value();
    shares->begin("w");
    EnergyValue lost;
    lost.lost = true;
    const auto split = shares->end("w", window_of({{0U, lost}, {1U, joules(1.0)}})).value();
    EXPECT_FALSE(split.at(0).known);
    EXPECT_NE(split.at(0).warnings.front().find("lost"), std::string::npos);
    EXPECT_EQ(split.at(1).gpu_mj, 1000);
}

TEST(WindowSharesTest, EndingAWindowThatIsNotOpenIsNotFound) {
    Gpus gpus = zeus::testing::fake_gpus(1);
    auto shares = WindowShares::open(gpus, {0}, edges_only()).value();
    shares->begin("w");
    shares->cancel("w");
    auto ended = shares->end("w", window_of({}));
    ASSERT_FALSE(ended.ok());
    EXPECT_EQ(ended.error().code, ErrorCode::NotFound);
    shares->begin("a");
    shares->reset();
    EXPECT_FALSE(shares->end("a", window_of({})).ok());
}

TEST(WindowSharesTest, TargetsDescribeThemselves) {
    EXPECT_EQ((ShareTarget{ShareTarget::Kind::Process, {12}}).describe(), "process 12");
    EXPECT_EQ((ShareTarget{ShareTarget::Kind::ProcessTree, {12}}).describe(), "process 12 and its descendants");
    EXPECT_EQ(ShareTarget::processes({12, 13}).describe(), "processes 12, 13");
    EXPECT_EQ(ShareTarget::this_process().describe(), "this process");
}

}  // namespace
}  // namespace zeus::attribution
