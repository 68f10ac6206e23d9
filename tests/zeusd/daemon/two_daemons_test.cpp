// A second zeusd next to a live one (a second `zeusd serve` by hand, a unit
// started twice) must leave the live one alone: before it changes any GPU
// it finds the socket answering or the restore ledger locked, and stops
// with a message naming the live daemon. Before, it "restored" the live daemon's
// clients' settings from the ledger and deleted the ledger, and only then
// found the socket taken (or, on another socket, went on serving).
#include <filesystem>
#include <fstream>
#include <iterator>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class TwoZeusdsTest : public ZeusdTest {
  protected:
    // This test process, a live client of the first daemon, changes GPU 0's
    // power limit through it; returns {limit before, limit set}.
    std::pair<long long, long long> change_power_limit() {
        const auto gpus = local_gpus();
        const auto before = gpus[0].power_limit().value().count();
        const auto range = gpus[0].power_limit_constraints().value();
        const auto target = before == range.min.count() ? range.max.count() : range.min.count();
        const auto reply = post("/gpu/set_power_limit?gpu_ids=0&block=true&power_limit_mw=" + std::to_string(target));
        EXPECT_EQ(reply.status, 200) << log();
        return {before, target};
    }
};

TEST_F(TwoZeusdsTest, ASecondZeusdOnTheSameSocketLeavesTheLiveOneAndItsClientsAlone) {
    start();
    const auto [before, target] = change_power_limit();
    const std::filesystem::path ledger = *endpoint_.unix_path + ".ledger.json";
    const std::string recorded = read_file(ledger);
    ASSERT_NE(recorded.find("power_limit"), std::string::npos);

    const auto [status, output] = run_zeusd({"serve", "--socket-path", *endpoint_.unix_path}, daemon_env());
    EXPECT_EQ(status, 1) << output;
    EXPECT_NE(output.find("pid " + std::to_string(daemon_->pid())), std::string::npos) << output;
    EXPECT_NE(output.find(*endpoint_.unix_path), std::string::npos) << output;
    EXPECT_EQ(output.find("restor"), std::string::npos) << output;

    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), target);
    EXPECT_EQ(read_file(ledger), recorded);
    EXPECT_EQ(get("/time").status, 200);
    // The live daemon still restores its own client's change when it stops.
    EXPECT_EQ(daemon_->stop(), 0);
    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), before) << log();
}

TEST_F(TwoZeusdsTest, ASecondZeusdWithTheSameLedgerIsRefusedBeforeTouchingAnyGpu) {
    const std::string ledger = (dir_ / "shared.ledger.json").string();
    start({"--restore-ledger", ledger});
    const auto [before, target] = change_power_limit();
    const std::string recorded = read_file(ledger);
    ASSERT_NE(recorded.find("power_limit"), std::string::npos);

    const std::string other_socket = (dir_ / "other.sock").string();
    const auto [status, output] = run_zeusd({"serve", "--socket-path", other_socket, "--restore-ledger", ledger},
                                            daemon_env(), std::chrono::seconds(20));
    EXPECT_EQ(status, 1) << output;
    EXPECT_NE(output.find("another zeusd (pid " + std::to_string(daemon_->pid()) + ", listening on " +
                          *endpoint_.unix_path + ")"),
              std::string::npos)
        << output;
    EXPECT_NE(output.find("--restore-ledger"), std::string::npos) << output;
    EXPECT_FALSE(std::filesystem::exists(other_socket));

    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), target);
    EXPECT_EQ(read_file(ledger), recorded);
    EXPECT_EQ(get("/time").status, 200);

    // Once the live daemon is gone, however it went, the ledger is free
    // again and the next daemon undoes what it left.
    daemon_->kill9();
    start({"--restore-ledger", ledger});
    EXPECT_EQ(local_gpus()[0].power_limit().value().count(), before) << log();
}

// Without gpu-control zeusd changes no GPU, so a ledger directory it cannot
// write (and so cannot lock in) does not stop it; it leaves the ledger alone.
TEST_F(TwoZeusdsTest, ReadOnlyZeusdStartsWhenItCannotLockTheLedger) {
    start({"--enable", "gpu-read", "--restore-ledger", "/proc/zeusd/ledger.json"});
    EXPECT_EQ(get("/discover").status, 200) << log();
    EXPECT_NE(log().find("not restored"), std::string::npos) << log();
}

}  // namespace
}  // namespace zeus::testing
