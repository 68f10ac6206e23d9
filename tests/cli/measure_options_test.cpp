// The options shared by `zeus power`, `zeus energy` and `zeus run`
// (apps/zeus/measure_options.hpp): index lists, formats, domains, and
// writable-path checks that leave nothing behind.
#include "measure_options.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace zeus::cli {
namespace {

namespace fs = std::filesystem;

TEST(MeasureOptions, IndexListsParse) {
    EXPECT_FALSE(parse_index_list("--gpus", "all").value().has_value());
    EXPECT_TRUE(parse_index_list("--gpus", "none").value()->empty());
    EXPECT_EQ(*parse_index_list("--gpus", "0,2").value(), (std::vector<unsigned>{0, 2}));
    EXPECT_EQ(*parse_index_list("--gpus", " 3 , 1 ").value(), (std::vector<unsigned>{3, 1}));
    EXPECT_EQ(*parse_index_list("--cpus", "0").value(), (std::vector<unsigned>{0}));
}

TEST(MeasureOptions, BadIndexListsNameTheOptionAndTheEntry) {
    auto r = parse_index_list("--gpus", "0,x");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("--gpus"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("\"x\""), std::string::npos) << r.error().message;
    r = parse_index_list("--gpus", "0,,1");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("entry 2 is empty"), std::string::npos) << r.error().message;
    r = parse_index_list("--cpus", "-1");
    ASSERT_FALSE(r.ok());
    r = parse_index_list("--cpus", "1,1");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("twice"), std::string::npos) << r.error().message;
    EXPECT_FALSE(parse_index_list("--gpus", "").ok());
}

TEST(MeasureOptions, UnknownIndicesNameTheIndexAndTheValidRange) {
    EXPECT_TRUE(check_indices("--gpus", "GPU", {0, 1}, 2).ok());
    auto s = check_indices("--gpus", "GPU", {0, 5}, 2);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "--gpus: no GPU 5; the valid indices are 0-1");
    s = check_indices("--cpus", "CPU", {1}, 1);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "--cpus: no CPU 1; the valid indices are 0");
    s = check_indices("--cpus", "CPU", {0}, 0, "no RAPL zones");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("there are no CPUs: no RAPL zones"), std::string::npos) << s.error().message;
    EXPECT_EQ(index_range(0), "none");
    EXPECT_EQ(index_range(4), "0-3");
}

TEST(MeasureOptions, FormatsAndDomains) {
    EXPECT_EQ(parse_format("csv").value(), OutputFormat::Csv);
    EXPECT_FALSE(parse_format("xml").ok());
    EXPECT_EQ(parse_power_domain("memory_average").value(), PowerDomain::MemoryAverage);
    EXPECT_FALSE(parse_power_domain("gpu").ok());
}

TEST(MeasureOptions, WritableChecksLeaveNothingBehind) {
    const fs::path dir = fs::temp_directory_path() / ("zeus-writable-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    EXPECT_TRUE(check_writable("--output", (dir / "new.txt").string()).ok());
    EXPECT_FALSE(fs::exists(dir / "new.txt"));
    std::ofstream(dir / "old.txt") << "keep";
    EXPECT_TRUE(check_writable("--output", (dir / "old.txt").string()).ok());
    EXPECT_EQ(fs::file_size(dir / "old.txt"), 4U);  // not truncated
    auto s = check_writable("--log-file", (dir / "missing" / "log.csv").string());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("--log-file"), std::string::npos);
    EXPECT_NE(s.error().message.find("missing/log.csv"), std::string::npos);
    EXPECT_FALSE(check_writable("--output", dir.string()).ok());  // a directory
    fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::cli
