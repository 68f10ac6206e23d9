// support/listening_line.hpp: the address a server prints, found in its
// output as it is written, and a clear failure when it never comes.
#include "support/listening_line.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace zeus::testing {
namespace {

TEST(ListeningLine, ParsesTheAddressAfterTheMarker) {
    auto v4 =
        parse_listening_line("zeus bso-server: listening on 127.0.0.1:43210 with the SQLite database", "listening on ");
    ASSERT_TRUE(v4);
    EXPECT_EQ(v4->host, "127.0.0.1");
    EXPECT_EQ(v4->ip(), "127.0.0.1");
    EXPECT_EQ(v4->port, 43210);
    auto v6 = parse_listening_line("2026-01-01T00:00:00.000000Z INFO zeusd: listening on [::1]:5", "listening on ");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "[::1]");
    EXPECT_EQ(v6->ip(), "::1");
    EXPECT_EQ(v6->host_port(), "[::1]:5");
    auto url = parse_listening_line("zeus exporter: serving http://0.0.0.0:9466/metrics (1 GPU(s))", "serving http://");
    ASSERT_TRUE(url);
    EXPECT_EQ(url->host_port(), "0.0.0.0:9466");
}

TEST(ListeningLine, LinesWithoutAnAddressAreNotOne) {
    EXPECT_FALSE(parse_listening_line("zeusd: listening on /run/zeusd/zeusd.sock (mode 666)", "listening on "));
    EXPECT_FALSE(parse_listening_line("listening on 127.0.0.1:", "listening on "));
    EXPECT_FALSE(parse_listening_line("listening on 127.0.0.1:123456", "listening on "));
    EXPECT_FALSE(parse_listening_line("listening on [::1 :80", "listening on "));
    EXPECT_FALSE(parse_listening_line("serving http://127.0.0.1:80/metrics", "listening on "));
}

class WaitForListening : public ::testing::Test {
  protected:
    void SetUp() override {
        output_ = std::filesystem::temp_directory_path() / ("zeus-listening-" + std::to_string(::getpid()) + ".log");
        std::filesystem::remove(output_);
    }
    void TearDown() override {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        std::filesystem::remove(output_);
    }
    // Runs `script` with /bin/sh, its standard output into output_.
    void run(const std::string& script) {
        pid_ = ::fork();
        if (pid_ == 0) {
            const int out = ::open(output_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            ::dup2(out, 1);
            ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }
    std::string failure(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        try {
            (void)wait_for_listening(output_, pid_, "listening on ", timeout);
        } catch (const std::runtime_error& error) {
            return error.what();
        }
        ADD_FAILURE() << "no failure";
        return {};
    }

    std::filesystem::path output_;
    pid_t pid_ = -1;
};

TEST_F(WaitForListening, ReturnsTheAddressOnceTheLineIsWritten) {
    run("echo starting; sleep 0.3; echo 'x: listening on 127.0.0.1:4321 with more'; exec sleep 30");
    const auto address = wait_for_listening(output_, pid_);
    EXPECT_EQ(address.host_port(), "127.0.0.1:4321");
}

TEST_F(WaitForListening, ReadsOnlyFromTheOffsetGiven) {
    std::ofstream(output_) << "x: listening on 127.0.0.1:1111\n";
    const auto earlier = std::filesystem::file_size(output_);
    run("sleep 0.2; echo 'x: listening on 127.0.0.1:2222'; exec sleep 30");
    EXPECT_EQ(wait_for_listening(output_, pid_, "listening on ", std::chrono::seconds(10), earlier).port, 2222);
}

TEST_F(WaitForListening, AServerThatExitsFirstFailsWithItsOutput) {
    run("echo 'cannot listen: address in use'; printf 'listening on 127.0.0.1:12'; exit 2");
    const std::string message = failure();
    EXPECT_NE(message.find("exited before it printed 'listening on HOST:PORT'"), std::string::npos) << message;
    EXPECT_NE(message.find("cannot listen: address in use"), std::string::npos) << message;
}

TEST_F(WaitForListening, PortZeroIsAFailure) {
    run("echo 'listening on 127.0.0.1:0'; exec sleep 30");
    const std::string message = failure();
    EXPECT_NE(message.find("printed port 0"), std::string::npos) << message;
}

TEST_F(WaitForListening, TimesOutNamingTheLineAndShowingTheOutput) {
    run("echo 'still starting'; exec sleep 30");
    const std::string message = failure(std::chrono::milliseconds(300));
    EXPECT_NE(message.find("no 'listening on HOST:PORT' line"), std::string::npos) << message;
    EXPECT_NE(message.find("still starting"), std::string::npos) << message;
}

}  // namespace
}  // namespace zeus::testing
