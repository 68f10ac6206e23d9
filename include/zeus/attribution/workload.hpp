// From a process to the workload it belongs to, by what the kernel says about
// it under /proc: its cgroup path (v1 or v2; systemd or cgroupfs drivers;
// nested, as in kind or Docker-in-Docker) gives the container id and runtime
// (Docker, containerd, CRI-O, Podman), the Kubernetes pod UID (kubepods, with
// systemd's `_` for `-` undone) and the Slurm job and step (`job_<id>/step_<id>`);
// its status gives the user (real uid; a user-<uid>.slice otherwise). Every
// level is optional, and an absent one says why in `unavailable`.
//
// The pod's namespace and name are not in any cgroup path: they need the
// kubelet (docs/attribution.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::attribution {

// The cgroup path that places a process: the unified (v2) hierarchy's, else
// the v1 path of memory, cpu or name=systemd (in that order), else the first.
// NotFound with the reason when the text has no usable line.
[[nodiscard]] Result<std::string> cgroup_path_of(std::string_view proc_pid_cgroup);

struct CgroupWorkload {
    std::string container_id;                // 64 hex digits; empty when none
    std::string container_runtime;           // docker, containerd, cri-o, podman; empty when the path does not say
    std::string pod_uid;                     // with dashes; empty when not under kubepods
    std::string slurm_job;                   // "1234"; empty when none
    std::string slurm_step;                  // "0", "batch", "extern"...; empty when none
    std::optional<std::uint32_t> slice_uid;  // from user-<uid>.slice or Slurm's uid_<uid>
};

// What one cgroup path says. The innermost (deepest) container in a nested
// path wins: that is the one the process runs in.
[[nodiscard]] CgroupWorkload parse_cgroup_path(std::string_view path);

struct Workload {
    std::uint32_t pid = 0;
    std::string cgroup;  // the path the rest came from
    std::string container_id;
    std::string container_runtime;
    std::string pod_uid;
    std::string slurm_job;
    std::string slurm_step;
    std::optional<std::uint32_t> uid;
    std::string user;  // the user's name, or the uid in decimal when it has none here
    // One line per level that could not be resolved, e.g. "pod: the cgroup
    // path is not under kubepods".
    std::vector<std::string> unavailable;
};

// Who runs a process: its real uid and the user's name (the uid in decimal
// when it has none here).
struct ProcessOwner {
    std::uint32_t uid = 0;
    std::string user;
};

// Whether `proc_root` (--proc) can be where the host's /proc is: a directory.
// InvalidConfig naming it and --proc otherwise: every process would be
// unresolved (attribution) or unverifiable (zeusd's owner policy).
[[nodiscard]] Status check_proc_root(const std::filesystem::path& proc_root);

// Resolves processes under a /proc root (a fake tree in tests; the host's
// /proc, which for a containerised exporter needs hostPID).
class WorkloadResolver {
  public:
    explicit WorkloadResolver(std::filesystem::path proc_root = "/proc");

    // NotFound when /proc/<pid> vanished (the process ended), NoPermission or
    // OperatingSystem when it cannot be read; the message names the file.
    [[nodiscard]] Result<Workload> resolve(std::uint32_t pid) const;
    // The real uid from /proc/<pid>/status only, never from the cgroup path
    // as resolve() may: a process in a user's session slice can run as
    // another user (sudo). The errors are resolve()'s; InvalidState when the
    // status has no Uid line.
    [[nodiscard]] Result<ProcessOwner> owner(std::uint32_t pid) const;

  private:
    std::filesystem::path proc_root_;
};

}  // namespace zeus::attribution
