// The monitors' unit tests over fake GPUs: two fakes (tests/support/
// fake_gpu.hpp) drawing a steady 300 W on the real clock, and a directory of
// the test's own for log files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include "support/fake_gpu.hpp"
#include "support/test_directory.hpp"

namespace zeus::testing {

class TwoFakeGpus : public ::testing::Test {
  protected:
    static Gpus open_gpus() { return fake_gpus(2); }

    TestDirectory directory_;
    const std::filesystem::path& dir_ = directory_.path();
};

}  // namespace zeus::testing
