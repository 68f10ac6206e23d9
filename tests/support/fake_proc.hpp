// A fake /proc tree in a test's directory: /proc/<pid>/cgroup and status as
// the kernel writes them, for the readers that take a /proc root (the
// attribution layer's workloads, zeusd's GPU owner policy).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace zeus::testing {

class FakeProcTree {
  public:
    explicit FakeProcTree(std::filesystem::path root) : root_(std::move(root)) {
        std::filesystem::create_directories(root_);
    }

    [[nodiscard]] const std::filesystem::path& root() const { return root_; }

    // /proc/<pid> with its cgroup file and, when given, its status file.
    void add(std::uint32_t pid, const std::string& cgroup, const std::optional<std::string>& status) const {
        const auto pid_dir = root_ / std::to_string(pid);
        std::filesystem::create_directories(pid_dir);
        std::ofstream(pid_dir / "cgroup") << cgroup;
        if (status) std::ofstream(pid_dir / "status") << *status;
    }

    // A process of `uid` in that user's session, as /proc shows it.
    void add_user_process(std::uint32_t pid, std::uint32_t uid) const {
        add(pid, "0::/user.slice/user-" + std::to_string(uid) + ".slice/session-1.scope\n", status_of_uid(uid));
    }

    // A status file's text for a process whose real, effective, saved and
    // filesystem uids and gids are all `uid`.
    [[nodiscard]] static std::string status_of_uid(std::uint32_t uid) {
        const std::string id = std::to_string(uid);
        return "Name:\tpython\nUmask:\t0022\nUid:\t" + id + "\t" + id + "\t" + id + "\t" + id + "\nGid:\t" + id + "\t" +
               id + "\t" + id + "\t" + id + "\n";
    }

    void remove(std::uint32_t pid) const { std::filesystem::remove_all(root_ / std::to_string(pid)); }

  private:
    std::filesystem::path root_;
};

}  // namespace zeus::testing
