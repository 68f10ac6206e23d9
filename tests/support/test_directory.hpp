// A directory of the running test's own (under the system's temp directory,
// named by process and test), removed with everything in it at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace zeus::testing {

class TestDirectory {
  public:
    TestDirectory()
        : path_(std::filesystem::temp_directory_path() /
                ("zeus-test-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
        std::filesystem::create_directories(path_);
    }
    ~TestDirectory() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TestDirectory(const TestDirectory&) = delete;
    TestDirectory& operator=(const TestDirectory&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace zeus::testing
