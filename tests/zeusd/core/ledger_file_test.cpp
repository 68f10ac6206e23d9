// The restore ledger a previous zeusd left: a file that does not parse or
// does not validate (a wrong JSON type anywhere) is moved aside with a
// warning, and zeusd starts with nothing to restore; it never throws.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "zeusd/ledger_file.hpp"

namespace zeus::zeusd {
namespace {

class LedgerFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        path_ = std::filesystem::temp_directory_path() /
                ("zeusd-ledger-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
        std::filesystem::remove(path_);
        std::filesystem::remove(path_.string() + ".corrupt");
    }
    void TearDown() override {
        std::filesystem::remove(path_);
        std::filesystem::remove(path_.string() + ".corrupt");
    }
    LedgerFile::Leftovers load(const std::string& text) {
        std::ofstream(path_) << text;
        return LedgerFile(path_, {"00000000:01:00.0"}).load();
    }
    std::filesystem::path path_;
};

TEST_F(LedgerFileTest, AValidLedgerIsRead) {
    const auto leftovers = load(R"({"records":[{"gpu":0,"pci_address":"00000000:01:00.0","setting":"power_limit",
                                    "owner_pid":42,"previous":300000}]})");
    ASSERT_EQ(leftovers.records.size(), 1U);
    EXPECT_EQ(leftovers.records[0].owner, 42);
    EXPECT_EQ(leftovers.records[0].previous, 300000);
    EXPECT_TRUE(leftovers.warnings.empty());
}

TEST_F(LedgerFileTest, WrongJsonTypesAreMovedAsideLikeACorruptFile) {
    const std::string good = R"("pci_address":"00000000:01:00.0","setting":"power_limit")";
    for (const std::string& text :
         {std::string(R"({"records":[1]})"), std::string(R"({"records":[{"pci_address":7,"setting":"power_limit","owner_pid":1}]})"),
          R"({"records":[{)" + good + R"(,"owner_pid":"x"}]})", R"({"records":[{)" + good + R"(,"owner_pid":-1}]})",
          R"({"records":[{)" + good + R"(,"owner_pid":1,"previous":"300"}]})",
          std::string(R"({"records":[{"pci_address":"00000000:01:00.0","setting":[],"owner_pid":1}]})")}) {
        LedgerFile::Leftovers leftovers;
        ASSERT_NO_THROW(leftovers = load(text)) << text;
        EXPECT_TRUE(leftovers.records.empty()) << text;
        ASSERT_EQ(leftovers.warnings.size(), 1U) << text;
        EXPECT_NE(leftovers.warnings[0].find("records[0]"), std::string::npos) << leftovers.warnings[0];
        EXPECT_NE(leftovers.warnings[0].find(".corrupt"), std::string::npos) << leftovers.warnings[0];
        EXPECT_FALSE(std::filesystem::exists(path_)) << text;
        EXPECT_TRUE(std::filesystem::exists(path_.string() + ".corrupt")) << text;
        std::filesystem::remove(path_.string() + ".corrupt");
    }
}

}  // namespace
}  // namespace zeus::zeusd
