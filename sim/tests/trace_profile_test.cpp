#include <gtest/gtest.h>

#include <memory>

#include "errors.h"
#include "trace_profile.h"
#include "test_support.h"
#include "support/build_paths.hpp"

namespace zeus::sim {
namespace {

using testing::TempDir;

constexpr const char* kCsv =
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
    "cifar100,shufflenetv2,128,adam,200,10.0,180.5\n"
    "cifar100,shufflenetv2,128,adam,100,20.0,99.0\n"
    "cifar100,shufflenetv2,256,adam,100,15.0,95.0\n"
    "cifar100,shufflenetv2,256,sgd,100,16.0,96.0\n"
    "cifar100,shufflenetv2,256,adam,200,7.5,190.0\n"
    "squad,bert,32,adamw,150,100.0,140.0\n";

std::string error_of(const std::string& path, const std::string& workload, int batch, const std::string& opt) {
  try {
    read_trace_csv(path, workload, batch, opt);
  } catch (const SimError& e) {
    return e.what();
  }
  return "";
}

TEST(SimTraceProfile, ReadsTheRowsOfOneWorkload) {
  TempDir dir;
  const auto path = dir.write("trace.csv", kCsv);
  const TraceRows rows = read_trace_csv(path, "cifar100/shufflenetv2", 128, "");
  ASSERT_EQ(rows.power_limit_w.size(), 2u);
  EXPECT_EQ(rows.key, "trace.csv:cifar100/shufflenetv2:128:adam");
  const TraceRows sgd = read_trace_csv(path, "cifar100/shufflenetv2", 256, "sgd");
  ASSERT_EQ(sgd.time_per_epoch_s.size(), 1u);
  EXPECT_DOUBLE_EQ(sgd.time_per_epoch_s[0], 16.0);
}

TEST(SimTraceProfile, ErrorsSayWhatIsAvailable) {
  TempDir dir;
  const auto path = dir.write("trace.csv", kCsv);
  EXPECT_NE(error_of(path, "imagenet/resnet50", 128, "").find("squad/bert"), std::string::npos);
  EXPECT_NE(error_of(path, "cifar100/shufflenetv2", 64, "").find("128"), std::string::npos);
  EXPECT_NE(error_of(path, "cifar100/shufflenetv2", 256, "").find("sgd"), std::string::npos)
      << "several optimizers: must choose";
  EXPECT_NE(error_of(path, "cifar100", 128, "").find("dataset/network"), std::string::npos);
  EXPECT_NE(error_of(dir.file("none.csv"), "a/b", 1, "").find("none.csv"), std::string::npos);
}

TEST(SimTraceProfile, InterpolatesAndClamps) {
  auto state = std::make_unique<SharedState>();
  TraceRows rows;
  rows.key = "k";
  rows.power_limit_w = {200, 100};
  rows.time_per_epoch_s = {10, 20};
  rows.average_power_w = {180, 100};
  const int id = store_trace_profile(*state, rows);
  const TraceProfile& p = state->profiles[id];
  EXPECT_DOUBLE_EQ(interpolate_profile(p, p.time_per_epoch_s, 150), 15);
  EXPECT_DOUBLE_EQ(interpolate_profile(p, p.average_power_w, 125), 120);
  EXPECT_DOUBLE_EQ(interpolate_profile(p, p.time_per_epoch_s, 50), 20);
  EXPECT_DOUBLE_EQ(interpolate_profile(p, p.time_per_epoch_s, 400), 10);
  rows.time_per_epoch_s = {0, 1};
  EXPECT_THROW(store_trace_profile(*state, rows), SimError);
}

// The real traces (data/power-traces).
TEST(SimTraceProfile, ReadsTheRealA40Trace) {
  // Part of the clone: a missing trace fails rather than skips.
  const std::string path = zeus::testing::data_dir() + "/power-traces/summary_power_a40.csv";
  const TraceRows rows = read_trace_csv(path, "cifar100/shufflenetv2", 1024, "");
  ASSERT_GE(rows.power_limit_w.size(), 5u);
  for (std::size_t i = 0; i < rows.power_limit_w.size(); ++i) {
    EXPECT_GT(rows.time_per_epoch_s[i], 0);
    EXPECT_GT(rows.average_power_w[i], 50);
  }
}

}  // namespace
}  // namespace zeus::sim
