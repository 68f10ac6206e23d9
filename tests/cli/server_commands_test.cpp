// The server commands' own input (--listen, --database, the scheduler
// settings): a bad one is exit code 2 and one line naming it and the fix,
// before anything is served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/command_output.hpp"
#include "support/taken_port.hpp"
#include "support/build_paths.hpp"

namespace zeus::testing {
namespace {

struct Case {
    std::string arguments;
    std::string expected;  // in standard error
};

void expect_refused(const Case& c) {
    const auto r = capture_separately(zeus::testing::zeus_cli_path() + " " + c.arguments);
    EXPECT_EQ(r.exit_code, 2) << c.arguments << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.arguments << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ServerCommands, BsoServerRefusesBadListenAddressesAndDatabases) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-server-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string db = " --database " + (dir / "bso.db").string();
    TakenPort taken;
    expect_refused({"bso-server" + db + " --listen localhost", "--listen: TCP address 'localhost' has no port"});
    expect_refused({"bso-server" + db + " --listen 127.0.0.1:99999", "--listen: '127.0.0.1:99999' is not a valid"});
    expect_refused({"bso-server" + db + " --listen " + taken.address(), "--listen: cannot listen on " + taken.address()});
    expect_refused({"bso-server --listen 127.0.0.1:0 --database " + (dir / "no/such/dir/bso.db").string(),
                    "cannot open the database file '" + (dir / "no/such/dir/bso.db").string() + "'"});
    std::filesystem::remove_all(dir);
}

TEST(ServerCommands, PerseusServerRefusesBadListenAddressesAndSettings) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-server-cli-pfo-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto solution = dir / "solution.json";
    std::ofstream(solution) << R"([[["forward", 1410], ["backward", 1410]]])";
    const std::string ok = "perseus-server --solution " + solution.string();
    TakenPort taken;
    expect_refused({ok + " --listen localhost", "--listen: TCP address 'localhost' has no port"});
    expect_refused({ok + " --listen " + taken.address(), "--listen: cannot listen on " + taken.address()});
    expect_refused({ok + " --scheduler Nope", "unknown scheduler 'Nope': use PointSolution or PointSolution3D"});
    expect_refused({"perseus-server --listen 127.0.0.1:0", "no solution file: set scheduler_args' solution_path (--solution)"});
    expect_refused({"perseus-server --listen 127.0.0.1:0 --solution " + (dir / "missing.json").string(),
                    "cannot use the solution file '" + (dir / "missing.json").string() + "': it does not exist"});
    std::ofstream(solution) << "{}";
    expect_refused({ok + " --listen 127.0.0.1:0", "a solution is a list with one list of (instruction, frequency) per rank"});
    std::filesystem::remove_all(dir);
}

// An address this machine does not have is not a port problem: every server
// says so, and a taken port still says to pick a free one.
TEST(ServerCommands, AnAddressThisMachineDoesNotHaveIsNotBlamedOnThePort) {
    const auto dir = std::filesystem::temp_directory_path() / ("zeus-server-cli-addr-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto solution = dir / "solution.json";
    std::ofstream(solution) << R"([[["forward", 1410], ["backward", 1410]]])";
    const std::string link_local = " --listen '[fe80::1%lo]:0'";
    const std::string not_ours = "the address is not one of this machine's";
    TakenPort taken;
    for (const std::string& server : std::vector<std::string>{"bso-server --database " + (dir / "bso.db").string(),
                                                              "perseus-server --solution " + solution.string(),
                                                              "exporter --simulate --cpus none"}) {
        SCOPED_TRACE(server);
        const auto env = "env ZEUS_SIM_STATE=" + (dir / "state").string() + " ";
        const auto r = capture_separately(env + zeus::testing::zeus_cli_path() + " " + server + link_local);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find(not_ours), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("pick a free port"), std::string::npos) << r.err;
        const auto busy =
            capture_separately(env + zeus::testing::zeus_cli_path() + " " + server + " --listen " + taken.address());
        EXPECT_NE(busy.err.find("pick a free port"), std::string::npos) << busy.err;
    }
    const auto zeusd =
        capture_separately("env ZEUS_SIMULATE=1 ZEUS_SIM_LIBRARY=" + zeus::testing::sim_nvml_library_path() +
                           " ZEUS_SIM_STATE=" + (dir / "state").string() + " " + zeus::testing::zeusd_path() +
                           " serve --mode tcp --tcp-bind-address '[fe80::1%lo]:0' --enable gpu-read "
                           "--restore-ledger " +
                           (dir / "ledger.json").string());
    EXPECT_NE(zeusd.exit_code, 0) << zeusd.err;
    EXPECT_NE((zeusd.out + zeusd.err).find(not_ours), std::string::npos) << zeusd.out << zeusd.err;
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::testing
