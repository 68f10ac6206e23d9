// A zeusd that dies without cleaning up (kill -9, a segfault, the OOM
// killer) must not leave clients' GPU changes in place for good: the ledger
// is on disk before each change, and the next zeusd puts back what the dead
// one recorded.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

TEST_F(ZeusdTest, ANewZeusdRestoresWhatAKilledOneLeftChanged) {
    start();
    const auto gpus = local_gpus();
    const auto limit_before = gpus[0].power_limit().value().count();
    const auto range = gpus[0].power_limit_constraints().value();
    const auto target = limit_before == range.min.count() ? range.max.count() : range.min.count();
    const bool persistence_before = gpus[1].persistence_mode().value();
    // This test process is the client; it stays alive, so only the crash can lose the ledger.
    ASSERT_EQ(post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + std::to_string(target) + "&block=true").status,
              200)
        << log();
    ASSERT_EQ(post(std::string("/gpu/set_persistence_mode?gpu_ids=1&block=true&enabled=") +
                   (persistence_before ? "false" : "true"))
                  .status,
              200)
        << log();
    const std::filesystem::path ledger = *endpoint_.unix_path + ".ledger.json";
    EXPECT_TRUE(std::filesystem::exists(ledger));

    daemon_->kill9();
    // The crash itself puts nothing back.
    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), target);
    EXPECT_EQ(local_gpus()[1].persistence_mode().value(), !persistence_before);

    start();
    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), limit_before) << log();
    EXPECT_EQ(local_gpus()[1].persistence_mode().value(), persistence_before) << log();
    EXPECT_NE(log().find("previous zeusd"), std::string::npos) << log();
    EXPECT_NE(log().find("restored GPU 0 with set_power_limit"), std::string::npos) << log();
    EXPECT_NE(log().find("restored GPU 1 with set_persistence_mode"), std::string::npos) << log();
    EXPECT_FALSE(std::filesystem::exists(ledger));
}

TEST_F(ZeusdTest, PersistedChangesAreNotUndoneAfterACrash) {
    start();
    const auto gpus = local_gpus();
    const auto range = gpus[0].power_limit_constraints().value();
    const auto target = gpus[0].power_limit().value().count() == range.min.count() ? range.max.count()
                                                                                    : range.min.count();
    ASSERT_EQ(post("/gpu/set_power_limit?gpu_ids=0&persist=true&block=true&power_limit_mw=" + std::to_string(target))
                  .status,
              200);
    daemon_->kill9();
    start();
    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), target) << log();
    EXPECT_EQ(log().find("previous zeusd"), std::string::npos) << log();
}

// A ledger that parses but does not validate (a wrong JSON type) aborted
// every start with a type_error: it is set aside like a corrupt one, and
// zeusd starts.
TEST_F(ZeusdTest, ALedgerWithWrongTypesIsSetAsideAndZeusdStarts) {
    const std::filesystem::path ledger = *endpoint_.unix_path + ".ledger.json";
    for (const char* text : {R"({"records":[1]})", R"({"records":[{"pci_address":7,"setting":"power_limit","owner_pid":1}]})",
                             R"({"records":[{"pci_address":"x","setting":"power_limit","owner_pid":"x"}]})"}) {
        std::ofstream(ledger) << text;
        start();
        EXPECT_EQ(get("/time").status, 200) << text << "\n" << log();
        EXPECT_NE(log().find("is not valid"), std::string::npos) << log();
        EXPECT_TRUE(std::filesystem::exists(ledger.string() + ".corrupt")) << text;
        daemon_.reset();
        std::filesystem::remove(ledger.string() + ".corrupt");
    }
}

TEST_F(ZeusdTest, AnUnwritableLedgerDirectoryIsRefusedAtStart) {
    const auto [status, output] =
        run_zeusd({"serve", "--socket-path", *endpoint_.unix_path, "--restore-ledger", "/proc/zeusd/ledger.json"},
                  daemon_env());
    EXPECT_NE(status, 0) << output;
    EXPECT_NE(output.find("--restore-ledger"), std::string::npos) << output;
}

// The ledger goes to disk (a temporary file, two fsyncs, a rename) when it
// changes, not on every control request: a client setting the same thing
// again and again (a training loop re-applying its power limit) costs no
// disk writes after the first.
TEST_F(ZeusdTest, RepeatingAChangeDoesNotRewriteTheLedger) {
    start();
    const auto range = local_gpus()[0].power_limit_constraints().value();
    const std::string request =
        "/gpu/set_power_limit?gpu_ids=0&block=true&power_limit_mw=" + std::to_string(range.min.count());
    ASSERT_EQ(post(request).status, 200) << log();
    const std::filesystem::path ledger = *endpoint_.unix_path + ".ledger.json";
    ASSERT_TRUE(std::filesystem::exists(ledger));
    const auto read = [&] {
        std::ifstream in(ledger);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    // A mark zeusd's own writer never produces: it survives only if zeusd leaves the file alone.
    const std::string marked = read() + "\n\n";
    std::ofstream(ledger) << marked;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(post(request).status, 200) << log();
    EXPECT_EQ(read(), marked);
    // A change the ledger does not hold yet is still written before it is applied.
    const bool persistence = local_gpus()[0].persistence_mode().value();
    ASSERT_EQ(post(std::string("/gpu/set_persistence_mode?gpu_ids=0&block=true&enabled=") +
                   (persistence ? "true" : "false"))
                  .status,
              200)
        << log();
    EXPECT_NE(read(), marked);
    EXPECT_NE(read().find("persistence_mode"), std::string::npos) << read();
}

}  // namespace
}  // namespace zeus::testing
