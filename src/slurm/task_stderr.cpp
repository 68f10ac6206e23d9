#include "slurm/task_stderr.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zeus::slurm {

TaskStderrRelay::~TaskStderrRelay() { close_all(); }

bool TaskStderrRelay::open() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
    receiver_ = pair[0];
    sender_ = pair[1];
    return true;
}

namespace {

// One message on the socket pair: a task id and room for one descriptor.
// Not copyable: the header points into the object itself.
struct DescriptorMessage {
    int task_id = -1;
    iovec payload{&task_id, sizeof task_id};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{};

    DescriptorMessage() {
        header.msg_iov = &payload;
        header.msg_iovlen = 1;
        header.msg_control = control;
        header.msg_controllen = sizeof control;
    }
    DescriptorMessage(const DescriptorMessage&) = delete;
    DescriptorMessage& operator=(const DescriptorMessage&) = delete;
};

}  // namespace

void TaskStderrRelay::send_from_task(int task_id) const {
    if (sender_ < 0) return;
    DescriptorMessage message;
    message.task_id = task_id;
    cmsghdr* rights = CMSG_FIRSTHDR(&message.header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    const int descriptor = STDERR_FILENO;
    std::memcpy(CMSG_DATA(rights), &descriptor, sizeof descriptor);
    // Non-blocking: a task never waits on the plugin (a full queue only loses the line).
    while (::sendmsg(sender_, &message.header, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

void TaskStderrRelay::receive_pending() {
    if (receiver_ < 0) return;
    while (true) {
        DescriptorMessage message;
        const auto n = ::recvmsg(receiver_, &message.header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        for (cmsghdr* rights = CMSG_FIRSTHDR(&message.header); rights != nullptr;
             rights = CMSG_NXTHDR(&message.header, rights)) {
            if (rights->cmsg_level != SOL_SOCKET || rights->cmsg_type != SCM_RIGHTS) continue;
            int descriptor = -1;
            std::memcpy(&descriptor, CMSG_DATA(rights), sizeof descriptor);
            if (auto [it, inserted] = received_.emplace(message.task_id, descriptor); !inserted) ::close(descriptor);
        }
    }
}

int TaskStderrRelay::take(int task_id) {
    receive_pending();
    const auto found = received_.find(task_id);
    if (found == received_.end()) return -1;
    const int descriptor = found->second;
    received_.erase(found);
    return descriptor;
}

void TaskStderrRelay::close_all() {
    receive_pending();
    for (const auto& [task, descriptor] : received_) ::close(descriptor);
    received_.clear();
    for (int* end : {&receiver_, &sender_}) {
        if (*end >= 0) ::close(*end);
        *end = -1;
    }
}

void write_line(int fd, const std::string& line) {
    std::size_t written = 0;
    while (written < line.size()) {
        const auto n = ::write(fd, line.data() + written, line.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        written += static_cast<std::size_t>(n);
    }
}

}  // namespace zeus::slurm
