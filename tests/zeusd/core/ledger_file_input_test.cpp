// The restore ledger's path given to --restore-ledger is read through the
// one reader of users' files (platform/user_file.hpp): a directory or a FIFO
// there is named in a warning and start-up goes on, never hangs or aborts.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "zeusd/ledger_file.hpp"

namespace zeus::zeusd {
namespace {

namespace fs = std::filesystem;

TEST(LedgerFileInput, ADirectoryOrFifoIsNamedAndNothingIsRestored) {
    const auto dir = fs::temp_directory_path() / ("zeusd-ledger-input-" + std::to_string(::getpid()));
    fs::create_directories(dir / "a-directory");
    const auto fifo = dir / "a-fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const auto& [path, says] : {std::pair{dir / "a-directory", "is a directory"},
                                     std::pair{fifo, "is a FIFO"}}) {
        const auto started = std::chrono::steady_clock::now();
        const auto leftovers = LedgerFile(path, {}).load();
        EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2)) << path;
        EXPECT_TRUE(leftovers.records.empty());
        ASSERT_EQ(leftovers.warnings.size(), 1U) << path;
        EXPECT_NE(leftovers.warnings[0].find(says), std::string::npos) << leftovers.warnings[0];
        EXPECT_NE(leftovers.warnings[0].find("--restore-ledger"), std::string::npos) << leftovers.warnings[0];
        EXPECT_TRUE(fs::exists(path)) << "not moved aside like a corrupt file";
    }
    const auto missing = LedgerFile(dir / "none.json", {}).load();
    EXPECT_TRUE(missing.records.empty());
    EXPECT_TRUE(missing.warnings.empty());  // no ledger: nothing to say
    fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd
