// `zeusd serve --control-policy owner`: a client may change a GPU's settings
// only while the GPU is idle or every process on it is the client's own.
// "On it": the driver's list of compute processes (GpuProcessQuery); "own":
// the process's real uid (/proc/<pid>/status) is the client's. The client's
// uid is the kernel's word for a Unix-socket peer (SO_PEERCRED), and for a
// TCP client the local user its token names; root has no exception (a
// container's root is uid 0 too). Anything that cannot be checked (a driver
// error, a process that ended mid-check, an unreadable /proc entry) refuses:
// the policy never allows by accident. The check runs when the request
// arrives, before the command queues in the GPU's lane: a process that starts
// in between is not seen (as with any check made before an act). Putting back
// what a client changed when it exits is no request and never checked.
// docs/zeusd.md.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/attribution/workload.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/metrics/exposition.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

// Who may change which GPU, once the API group, token and --control-users/
// --control-groups checks passed. Any: every GPU (the original's).
enum class ControlPolicy { Any, Owner };

[[nodiscard]] constexpr std::string_view to_string(ControlPolicy policy) {
    return policy == ControlPolicy::Owner ? "owner" : "any";
}
// "any" or "owner"; InvalidConfig naming --control-policy otherwise.
[[nodiscard]] Result<ControlPolicy> parse_control_policy(std::string_view text);

// One process on the GPU that is not the client's.
struct ForeignProcess {
    std::uint32_t pid = 0;
    std::uint32_t uid = 0;
    std::string user;  // the uid in decimal when the user has no name here
};

// What the policy found for one GPU.
struct OwnershipCheck {
    enum class Outcome {
        Idle,          // no process on it: allowed
        OwnProcesses,  // only the client's: allowed
        OtherUsers,    // refused: `others` holds them
        Unverifiable,  // refused: `reason` says what could not be checked
    };
    Outcome outcome = Outcome::Idle;
    std::vector<ForeignProcess> others;
    std::string reason;

    [[nodiscard]] bool allowed() const { return outcome == Outcome::Idle || outcome == Outcome::OwnProcesses; }
};

// idle, own_processes, other_user, unverifiable: the refusal's "reason" and the counter's label.
[[nodiscard]] constexpr std::string_view to_string(OwnershipCheck::Outcome outcome) {
    constexpr std::array<std::string_view, 4> kNames = {"idle", "own_processes", "other_user", "unverifiable"};
    return kNames.at(static_cast<std::size_t>(outcome));
}

class GpuOwnership {
  public:
    // `proc_root`: where the host's /proc is (a fake tree in tests).
    explicit GpuOwnership(std::filesystem::path proc_root = "/proc");

    // Whether a client of `client_uid` (nullopt: unknown, which owns no
    // process) may change GPU `gpu_index` now. Counts the outcome.
    [[nodiscard]] OwnershipCheck check(const Gpu& gpu, unsigned gpu_index,
                                       std::optional<std::uint32_t> client_uid) const;

    // How many checks ended with each Outcome (indexed by it), since start.
    [[nodiscard]] std::array<std::uint64_t, 4> counts() const;

  private:
    [[nodiscard]] OwnershipCheck evaluate(const Gpu& gpu, unsigned gpu_index,
                                          std::optional<std::uint32_t> client_uid) const;

    std::string proc_root_;  // named when a process is not found under it
    attribution::WorkloadResolver resolver_;
    mutable std::array<std::atomic<std::uint64_t>, 4> counts_{};
};

// zeusd_control_policy_checks_total{outcome}: every check by its outcome
// (idle, own_processes, other_user, unverifiable; the last two refused).
[[nodiscard]] metrics::MetricFamily checks_family(const GpuOwnership& ownership);

// Every GPU that cannot list its processes (its backend has no
// GpuProcessQuery): the owner policy would refuse it always. Empty: all can.
[[nodiscard]] std::vector<unsigned> gpus_without_process_list(const Gpus& gpus);

// The refusal's message: names the GPU, the other users' processes (pid,
// user, uid) or what could not be checked, and the fix. `token_user`: the
// user a TCP client's token names, when it has no account here (so the
// client owns no process and the message says why).
[[nodiscard]] std::string refusal_message(unsigned gpu_index, const OwnershipCheck& check,
                                          std::optional<std::uint32_t> client_uid, std::string_view token_user = {});

}  // namespace zeus::zeusd
