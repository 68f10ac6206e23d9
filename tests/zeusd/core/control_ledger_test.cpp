// What gets put back, and for whom.
#include <gtest/gtest.h>

#include "zeusd/control_ledger.hpp"

namespace zeus::zeusd {
namespace {

TEST(ControlLedgerTest, TheBaselineIsTheValueBeforeTheFirstChange) {
    ControlLedger ledger;
    ledger.record_change(0, Setting::PowerLimit, 300000, 42);
    ledger.record_change(0, Setting::PowerLimit, 250000, 42);  // a later change keeps the baseline
    const auto taken = ledger.take_owned_by(42);
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].previous, 300000);
    EXPECT_TRUE(ledger.snapshot().empty());
}

TEST(ControlLedgerTest, ASecondClientTakesOverButKeepsTheOriginalValue) {
    ControlLedger ledger;
    ledger.record_change(1, Setting::PowerLimit, 300000, 42);
    ledger.record_change(1, Setting::PowerLimit, 280000, 77);
    EXPECT_TRUE(ledger.take_owned_by(42).empty());  // 42 no longer owns it
    const auto taken = ledger.take_owned_by(77);
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].previous, 300000);
}

TEST(ControlLedgerTest, SettingsAreKeptPerGpuAndKind) {
    ControlLedger ledger;
    ledger.record_change(0, Setting::PowerLimit, 1, 42);
    ledger.record_change(1, Setting::PowerLimit, 2, 42);
    ledger.record_change(0, Setting::GpuLockedClocks, std::nullopt, 42);
    ledger.record_change(0, Setting::PersistenceMode, 0, 9);
    EXPECT_EQ(ledger.take_owned_by(42).size(), 3U);
    ledger.forget(0, Setting::PersistenceMode);
    EXPECT_FALSE(ledger.has(0, Setting::PersistenceMode));
    EXPECT_TRUE(ledger.take_all().empty());
}

TEST(ControlLedgerTest, TakeAllEmptiesTheLedger) {
    ControlLedger ledger;
    ledger.record_change(0, Setting::PowerLimit, 1, 42);
    ledger.record_change(0, Setting::MemLockedClocks, std::nullopt, 0);
    EXPECT_EQ(ledger.take_all().size(), 2U);
    EXPECT_TRUE(ledger.snapshot().empty());
}

// What tells GpuFleet whether the file on disk must be written again.
TEST(ControlLedgerTest, ReportsWhetherAnythingChanged) {
    ControlLedger ledger;
    EXPECT_TRUE(ledger.record_change(0, Setting::PowerLimit, 300000, 42));
    EXPECT_FALSE(ledger.record_change(0, Setting::PowerLimit, std::nullopt, 42));  // the same owner again
    EXPECT_TRUE(ledger.record_change(0, Setting::PowerLimit, std::nullopt, 77));   // a new owner
    EXPECT_TRUE(ledger.forget(0, Setting::PowerLimit));
    EXPECT_FALSE(ledger.forget(0, Setting::PowerLimit));
}

// owned_by predicts record_change's answer without changing anything.
TEST(ControlLedgerTest, OwnedByAgreesWithRecordChange) {
    ControlLedger ledger;
    EXPECT_FALSE(ledger.owned_by(0, Setting::PowerLimit, 42));
    EXPECT_TRUE(ledger.record_change(0, Setting::PowerLimit, 300000, 42));
    EXPECT_TRUE(ledger.owned_by(0, Setting::PowerLimit, 42));
    EXPECT_FALSE(ledger.owned_by(0, Setting::PowerLimit, 77));
    EXPECT_FALSE(ledger.owned_by(1, Setting::PowerLimit, 42));
    EXPECT_FALSE(ledger.owned_by(0, Setting::PersistenceMode, 42));
    EXPECT_FALSE(ledger.record_change(0, Setting::PowerLimit, std::nullopt, 42));
}

}  // namespace
}  // namespace zeus::zeusd
