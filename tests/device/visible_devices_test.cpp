#include "zeus/device/visible_devices.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace zeus {
namespace {

const std::vector<PhysicalGpu> kFourGpus = {
    {0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},
    {1, "GPU-1b2c3d4e-0000-1111-2222-333344445555"},
    {2, "GPU-1b2c9999-0000-1111-2222-333344445555"},
    {3, "GPU-ffee0011-0000-1111-2222-333344445555"},
};

struct SelectionCase {
    const char* name;
    std::optional<std::string> value;
    std::vector<unsigned> expected;  // physical indices, in visible order
    bool expect_warning;
    friend void PrintTo(const SelectionCase& c, std::ostream* os) { *os << c.name; }
};

class VisibleDevicesSelection : public ::testing::TestWithParam<SelectionCase> {};

TEST_P(VisibleDevicesSelection, ResolvesLikeCuda) {
    const auto& c = GetParam();
    std::optional<std::string_view> value;
    if (c.value) value = *c.value;
    auto selection = resolve_visible_devices(value, kFourGpus);
    ASSERT_TRUE(selection.ok()) << selection.error().describe();
    EXPECT_EQ(selection->physical_indices, c.expected);
    EXPECT_EQ(!selection->warnings.empty(), c.expect_warning)
        << (selection->warnings.empty() ? "" : selection->warnings.front());
}

INSTANTIATE_TEST_SUITE_P(
    Table, VisibleDevicesSelection,
    ::testing::Values(
        SelectionCase{"unset_means_all", std::nullopt, {0, 1, 2, 3}, false},
        SelectionCase{"empty_means_none", "", {}, false},
        SelectionCase{"blank_means_none", "  ", {}, false},
        SelectionCase{"single", "2", {2}, false},
        SelectionCase{"reordered", "3,1", {3, 1}, false},
        SelectionCase{"spaces_trimmed", " 0 , 2 ", {0, 2}, false},
        SelectionCase{"leading_zero_and_plus", "01,+2", {1, 2}, false},
        SelectionCase{"minus_one_hides_all_silently", "-1", {}, false},
        SelectionCase{"minus_one_truncates", "0,-1,1", {0}, true},
        SelectionCase{"out_of_range_truncates", "1,7,2", {1}, true},
        SelectionCase{"duplicate_hides_all", "0,1,0,2", {}, true},
        SelectionCase{"full_uuid", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", {0}, false},
        SelectionCase{"uuid_prefix", "GPU-ffee", {3}, false},
        SelectionCase{"uuid_hex_case_insensitive", "GPU-FFEE0011", {3}, false},
        SelectionCase{"mixed_uuid_and_index", "GPU-8932,2", {0, 2}, false},
        SelectionCase{"ambiguous_prefix_truncates", "0,GPU-1b2c,3", {0}, true},
        SelectionCase{"unique_longer_prefix", "GPU-1b2c9", {2}, false},
        SelectionCase{"unknown_uuid_truncates", "GPU-abcdef", {}, true},
        SelectionCase{"uuid_duplicate_of_index", "0,GPU-8932f937", {}, true}),
    [](const auto& test_param) { return std::string(test_param.param.name); });

struct SyntaxCase {
    const char* name;
    const char* value;
    const char* must_mention;  // the message names the problem
    friend void PrintTo(const SyntaxCase& c, std::ostream* os) { *os << c.name; }
};

class VisibleDevicesSyntax : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(VisibleDevicesSyntax, IsAClearError) {
    const auto& c = GetParam();
    auto selection = resolve_visible_devices(std::string_view(c.value), kFourGpus);
    ASSERT_FALSE(selection.ok());
    EXPECT_EQ(selection.error().code, ErrorCode::InvalidConfig);
    EXPECT_NE(selection.error().message.find(c.must_mention), std::string::npos) << selection.error().message;
    EXPECT_NE(selection.error().message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
    EXPECT_FALSE(selection.error().hint.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Table, VisibleDevicesSyntax,
    ::testing::Values(SyntaxCase{"word", "abc", "(\"abc\") is neither a GPU index nor a GPU UUID"},
                      SyntaxCase{"fraction", "1.5", "\"1.5\""},
                      SyntaxCase{"empty_entry", "0,,1", "entry 2 is empty"},
                      SyntaxCase{"trailing_comma", "0,", "entry 2 is empty"},
                      SyntaxCase{"space_separated", "0 1", "\"0 1\""},
                      SyntaxCase{"mig", "MIG-GPU-8932f937/1/0", "MIG"},
                      SyntaxCase{"mig_after_gpu", "0,MIG-abc", "entry 2"},
                      SyntaxCase{"uuid_with_junk", "GPU-12zz", "(\"GPU-12zz\") is not a GPU UUID"},
                      SyntaxCase{"lower_case_keyword", "gpu-8932f937", "must start with \"GPU-\" in upper case"},
                      SyntaxCase{"lower_case_mig", "mig-abc", "neither a GPU index nor a GPU UUID"}),
    [](const auto& test_param) { return std::string(test_param.param.name); });

TEST(VisibleDevices, HipVariableNameAppearsInErrors) {
    auto selection = resolve_visible_devices(std::string_view("x"), kFourGpus, "HIP_VISIBLE_DEVICES");
    ASSERT_FALSE(selection.ok());
    EXPECT_NE(selection.error().message.find("HIP_VISIBLE_DEVICES"), std::string::npos);
}

TEST(VisibleDevices, GpuWithUnreadableUuidStillCountsForIndices) {
    const std::vector<PhysicalGpu> gpus = {{0, "GPU-aaaa"}, {1, ""}, {2, "GPU-bbbb"}};
    auto by_index = resolve_visible_devices(std::string_view("1,2"), gpus);
    ASSERT_TRUE(by_index.ok());
    EXPECT_EQ(by_index->physical_indices, (std::vector<unsigned>{1, 2}));
    auto by_uuid = resolve_visible_devices(std::string_view("GPU-bbbb"), gpus);
    ASSERT_TRUE(by_uuid.ok());
    EXPECT_EQ(by_uuid->physical_indices, (std::vector<unsigned>{2}));
}

TEST(VisibleDevices, WarningSaysHowManyRemainVisible) {
    auto selection = resolve_visible_devices(std::string_view("0,1,9"), kFourGpus);
    ASSERT_TRUE(selection.ok());
    ASSERT_EQ(selection->warnings.size(), 1U);
    EXPECT_NE(selection->warnings[0].find("GPU 9 does not exist"), std::string::npos) << selection->warnings[0];
    EXPECT_NE(selection->warnings[0].find("2 GPUs are visible"), std::string::npos) << selection->warnings[0];
}

}  // namespace
}  // namespace zeus
