// A loopback TCP port held by this process while the object lives, for tests
// of what a server says when its address is taken.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace zeus::testing {

class TakenPort {
  public:
    TakenPort() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        EXPECT_EQ(::listen(fd_, 1), 0);
        EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
        address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    }
    ~TakenPort() { ::close(fd_); }
    TakenPort(const TakenPort&) = delete;
    TakenPort& operator=(const TakenPort&) = delete;
    // "127.0.0.1:PORT"
    [[nodiscard]] const std::string& address() const { return address_; }

  private:
    int fd_ = -1;
    std::string address_;
};

}  // namespace zeus::testing
