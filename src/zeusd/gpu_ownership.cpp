#include "zeusd/gpu_ownership.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "zeus/device/gpu_processes.hpp"

namespace zeus::zeusd {

Result<ControlPolicy> parse_control_policy(std::string_view text) {
    if (text == "any") return ControlPolicy::Any;
    if (text == "owner") return ControlPolicy::Owner;
    return Error{ErrorCode::InvalidConfig, fmt::format("--control-policy: unknown policy '{}'", text),
                 "use 'any' (whoever may use gpu-control changes any GPU) or 'owner' (only GPUs that are idle or "
                 "run only the client's own processes)"};
}

GpuOwnership::GpuOwnership(std::filesystem::path proc_root)
    : proc_root_(proc_root.string()), resolver_(std::move(proc_root)) {}

OwnershipCheck GpuOwnership::check(const Gpu& gpu, unsigned gpu_index, std::optional<std::uint32_t> client_uid) const {
    OwnershipCheck result = evaluate(gpu, gpu_index, client_uid);
    counts_[static_cast<std::size_t>(result.outcome)].fetch_add(1, std::memory_order_relaxed);
    return result;
}

std::array<std::uint64_t, 4> GpuOwnership::counts() const {
    std::array<std::uint64_t, 4> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
    return out;
}

OwnershipCheck GpuOwnership::evaluate(const Gpu& gpu, unsigned gpu_index,
                                      std::optional<std::uint32_t> client_uid) const {
    using Outcome = OwnershipCheck::Outcome;
    const auto processes = running_compute_processes(gpu);
    if (!processes) {
        return {
            Outcome::Unverifiable,
            {},
            fmt::format("the driver could not list GPU {}'s processes: {}", gpu_index, processes.error().describe())};
    }
    OwnershipCheck result;
    result.outcome = processes->empty() ? Outcome::Idle : Outcome::OwnProcesses;
    std::string unverifiable;
    for (const GpuProcess& process : *processes) {
        const auto owner = resolver_.owner(process.pid);
        if (!owner) {
            if (!unverifiable.empty()) continue;  // the first reason is enough
            unverifiable =
                owner.error().code == ErrorCode::NotFound
                    ? fmt::format(
                          "process {} on GPU {} ended while zeusd checked who runs it, or is in another "
                          "PID namespace than zeusd (in a container zeusd needs the host's: hostPID){}",
                          process.pid, gpu_index,
                          // A --proc elsewhere may be no /proc at all: every busy GPU would refuse.
                          proc_root_ == "/proc" ? std::string()
                                                : fmt::format(", or --proc {} is not the host's /proc", proc_root_))
                    : fmt::format("cannot tell who runs process {} on GPU {}: {}", process.pid, gpu_index,
                                  owner.error().describe());
            continue;
        }
        if (client_uid && owner->uid == *client_uid) continue;
        result.others.push_back({process.pid, owner->uid, owner->user});
    }
    // Another user's process is a reason of its own; an unchecked one only refuses when there is none.
    if (!result.others.empty()) {
        result.outcome = Outcome::OtherUsers;
    } else if (!unverifiable.empty()) {
        result.outcome = Outcome::Unverifiable;
        result.reason = std::move(unverifiable);
    }
    return result;
}

metrics::MetricFamily checks_family(const GpuOwnership& ownership) {
    metrics::MetricFamily family;
    family.name = "zeusd_control_policy_checks";
    family.help =
        "GPUs checked for a control request under --control-policy owner, by outcome (other_user and "
        "unverifiable were refused)";
    family.type = metrics::MetricType::Counter;
    const auto counts = ownership.counts();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        const auto outcome = to_string(static_cast<OwnershipCheck::Outcome>(i));
        family.samples.push_back({{{"outcome", std::string(outcome)}}, static_cast<double>(counts[i])});
    }
    return family;
}

std::vector<unsigned> gpus_without_process_list(const Gpus& gpus) {
    std::vector<unsigned> out;
    for (unsigned i = 0; i < gpus.size(); ++i) {
        if (process_query(gpus[i]) == nullptr) out.push_back(i);
    }
    return out;
}

namespace {

std::string client_words(std::optional<std::uint32_t> client_uid, std::string_view token_user) {
    if (client_uid) return fmt::format("your processes (uid {})", *client_uid);
    if (!token_user.empty()) {
        return fmt::format(
            "your processes (zeusd cannot tell who you are: your token names user '{}', who has no account on this "
            "host, so you own no process here; ask the operator for a token issued with --user naming your local "
            "user)",
            token_user);
    }
    return "your processes (zeusd cannot tell who you are: a TCP client without a token naming a local user owns no "
           "process)";
}

}  // namespace

std::string refusal_message(unsigned gpu_index, const OwnershipCheck& check, std::optional<std::uint32_t> client_uid,
                            std::string_view token_user) {
    if (check.outcome == OwnershipCheck::Outcome::Unverifiable) {
        return fmt::format(
            "GPU {} was not changed: zeusd serves --control-policy owner, which changes a GPU only when it is idle "
            "or runs only {}, and {}. Retry the request; if it keeps failing, see zeusd's log",
            gpu_index, client_words(client_uid, token_user), check.reason);
    }
    std::vector<std::string> processes;
    for (const auto& other : check.others) {
        processes.push_back(other.user == std::to_string(other.uid)
                                ? fmt::format("pid {} (uid {})", other.pid, other.uid)
                                : fmt::format("pid {} (user {}, uid {})", other.pid, other.user, other.uid));
    }
    return fmt::format(
        "GPU {} is in use by another user's process{}: {}. zeusd serves --control-policy owner: a GPU's settings "
        "can be changed only while it is idle or runs only {}. Wait until those processes end, use a GPU that is "
        "idle or yours, or ask the operator to change it",
        gpu_index, check.others.size() == 1 ? "" : "es", fmt::join(processes, ", "),
        client_words(client_uid, token_user));
}

}  // namespace zeus::zeusd
