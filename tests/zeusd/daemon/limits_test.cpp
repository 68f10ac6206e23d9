// What one local user can cost the daemon through the mode-666 socket:
// running it out of file descriptors must not turn into a busy accept loop
// or a log flood, and it serves again once connections close.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "zeusd_fixture.hpp"

namespace zeus::testing {
namespace {

using namespace std::chrono_literals;

// User plus system CPU time of `pid` so far.
std::chrono::milliseconds cpu_time(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command name (which may hold spaces) start after ") ".
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    unsigned long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14) utime = std::stoul(field);
        if (i == 15) stime = std::stoul(field);
    }
    return std::chrono::milliseconds((utime + stime) * 1000 / static_cast<unsigned long>(::sysconf(_SC_CLK_TCK)));
}

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t count = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
    return count;
}

TEST_F(ZeusdTest, RunningOutOfDescriptorsPausesAcceptingInsteadOfSpinning) {
    start({}, 64);
    std::vector<int> clients;
    for (int i = 0; i < 150; ++i) {
        const int fd = connect_to(endpoint_);
        ASSERT_GE(fd, 0);
        clients.push_back(fd);
    }
    ASSERT_TRUE(eventually([&] { return log().find("Too many open files") != std::string::npos; })) << log();
    const auto before = cpu_time(daemon_->pid());
    std::this_thread::sleep_for(1s);
    const auto used = cpu_time(daemon_->pid()) - before;
    // A busy loop burns a whole CPU second here; retrying every 100 ms costs next to nothing.
    EXPECT_LT(used, 200ms);
    // One warning per 10 s at most, however often accept fails.
    EXPECT_EQ(count_of(log(), "accept failed"), 1U) << log().substr(0, 4000);

    for (const int fd : clients) ::close(fd);
    EXPECT_TRUE(eventually([&] {
        try {
            return get("/discover").status == 200;
        } catch (const std::exception&) {
            return false;
        }
    })) << log().substr(0, 4000);
}

}  // namespace
}  // namespace zeus::testing
