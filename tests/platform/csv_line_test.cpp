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
    EXPECT_EQ(split_csv_line("a\t,\tb"), (Fields{"a", "b"}));
}

TEST(CsvLine, AByteOrderMarkBeforeTheHeaderIsDropped) {
    std::string excel = "\xEF\xBB\xBFstage,time";
    drop_utf8_bom(excel);
    EXPECT_EQ(split_csv_line(excel), (Fields{"stage", "time"}));
    std::string plain = "stage,time";
    drop_utf8_bom(plain);
    EXPECT_EQ(plain, "stage,time");
    std::string lone = "\xEF\xBB";  // not a whole mark: kept
    drop_utf8_bom(lone);
    EXPECT_EQ(lone.size(), 2U);
}

TEST(CsvLine, EmptyFieldsAreKeptSoTheirCountIsChecked) {
    EXPECT_EQ(split_csv_line("a,,b"), (Fields{"a", "", "b"}));
    EXPECT_EQ(split_csv_line("a,b,"), (Fields{"a", "b", ""}));
    EXPECT_EQ(split_csv_line("a,b,\r"), (Fields{"a", "b", ""}));
    EXPECT_EQ(split_csv_line(""), (Fields{""}));
}

}  // namespace
}  // namespace zeus
