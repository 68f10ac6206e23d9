// Notices when a client process ends, however it ends (kill -9 included):
// a pidfd becomes readable when its process exits, and Asio waits on it
// like on a socket, so no polling and no race with pid reuse.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace zeus::zeusd {

class ClientWatcher {
  public:
    ClientWatcher(boost::asio::any_io_executor executor, std::function<void(pid_t)> on_exit);
    ~ClientWatcher();
    ClientWatcher(const ClientWatcher&) = delete;
    ClientWatcher& operator=(const ClientWatcher&) = delete;

    // Starts watching `pid` unless already watched. A process that is
    // already gone is reported at once.
    void watch(pid_t pid);
    [[nodiscard]] std::size_t watched() const;

  private:
    boost::asio::any_io_executor executor_;
    std::function<void(pid_t)> on_exit_;
    mutable std::mutex mutex_;
    std::map<pid_t, std::shared_ptr<boost::asio::posix::stream_descriptor>> watches_;
};

}  // namespace zeus::zeusd
