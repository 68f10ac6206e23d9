// The one CSV line splitter of traces and profiles (src/platform/csv_line.hpp).
#include <gtest/gtest.h>

#include "platform/csv_line.hpp"

namespace zeus {
namespace {

using Fields = std::vector<std::string>;

TEST(CsvLine, SplitsOnCommasAndTrimsSpacesAndCarriageReturns) {
    EXPECT_EQ(split_csv_line("stage,instruction,time"), (Fields{"stage", "instruction", "time"}));
    EXPECT_EQ(split_csv_line(" 0 , forward ,1.5\r"), (Fields{"0", "forward", "1.5"}));
    EXPECT_EQ(split_csv_line("cifar100"), (Fields{"cifar100"}));
}

TEST(CsvLine, EmptyFieldsAreKeptSoTheirCountIsChecked) {
    EXPECT_EQ(split_csv_line("a,,b"), (Fields{"a", "", "b"}));
    EXPECT_EQ(split_csv_line("a,b,"), (Fields{"a", "b", ""}));
    EXPECT_EQ(split_csv_line("a,b,\r"), (Fields{"a", "b", ""}));
    EXPECT_EQ(split_csv_line(""), (Fields{""}));
}

}  // namespace
}  // namespace zeus
