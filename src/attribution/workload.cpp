#include "zeus/attribution/workload.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <system_error>

#include <fmt/format.h>

namespace zeus::attribution {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

bool is_hex(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
    });
}

bool is_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool consume_prefix(std::string_view& text, std::string_view prefix) {
    if (!text.starts_with(prefix)) return false;
    text.remove_prefix(prefix.size());
    return true;
}

void consume_suffix(std::string_view& text, std::string_view suffix) {
    if (text.ends_with(suffix)) text.remove_suffix(suffix.size());
}

constexpr std::size_t kContainerIdLength = 64;

// A container id in one path segment, as each runtime and cgroup driver names it:
//   systemd driver: docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope, libpod-<id>.scope
//   cgroupfs driver: /docker/<id>, /kubepods/.../pod<uid>/<id>, cri-containerd:<id>
// CRI-O's conmon (crio-conmon-<id>.scope) is the monitor, not the container.
struct SegmentContainer {
    std::string_view id;
    std::string_view runtime;
};

std::optional<SegmentContainer> container_in_segment(std::string_view segment) {
    consume_suffix(segment, ".scope");
    struct Prefix {
        std::string_view text;
        std::string_view runtime;
    };
    static constexpr Prefix prefixes[] = {
        {"docker-", "docker"},
        {"cri-containerd-", "containerd"},
        {"cri-containerd:", "containerd"},
        {"containerd-", "containerd"},
        {"crio-", "cri-o"},
        {"libpod-", "podman"},
    };
    for (const Prefix& prefix : prefixes) {
        std::string_view rest = segment;
        if (consume_prefix(rest, prefix.text) && rest.size() == kContainerIdLength && is_hex(rest)) {
            return SegmentContainer{rest, prefix.runtime};
        }
    }
    if (segment.size() == kContainerIdLength && is_hex(segment)) return SegmentContainer{segment, {}};
    return std::nullopt;
}

// A pod UID in a segment: pod<uid> (cgroupfs) or kubepods[-<qos>]-pod<uid_with_underscores>.slice (systemd).
std::optional<std::string> pod_uid_in_segment(std::string_view segment) {
    consume_suffix(segment, ".slice");
    const std::size_t at = segment.rfind("pod");
    if (at == std::string_view::npos) return std::nullopt;
    if (at != 0 && segment[at - 1] != '-') return std::nullopt;
    std::string uid(segment.substr(at + 3));
    std::replace(uid.begin(), uid.end(), '_', '-');
    // 8-4-4-4-12 hex digits.
    const auto groups = split(uid, '-');
    static constexpr std::size_t lengths[] = {8, 4, 4, 4, 12};
    if (groups.size() != 5) return std::nullopt;
    for (std::size_t i = 0; i < 5; ++i) {
        if (groups[i].size() != lengths[i] || !is_hex(groups[i])) return std::nullopt;
    }
    return uid;
}

std::optional<std::uint32_t> parse_uid(std::string_view digits) {
    std::uint32_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
    return value;
}

Error read_error(const std::filesystem::path& file, std::uint32_t pid, int error_number) {
    if (error_number == ENOENT || error_number == ESRCH) {
        return Error{
            ErrorCode::NotFound, "process " + std::to_string(pid) + " ended (" + file.string() + " is gone)", {}};
    }
    if (error_number == EACCES || error_number == EPERM) {
        return Error{ErrorCode::NoPermission, "cannot read " + file.string() + ": permission denied",
                     "run the exporter as root or with CAP_SYS_PTRACE, and with hostPID in a container"};
    }
    return Error{ErrorCode::OperatingSystem,
                 "cannot read " + file.string() + ": " + std::generic_category().message(error_number),
                 {}};
}

// POSIX reads, so that the errno of a failed read (EISDIR, EACCES, ESRCH for
// a process that ended between open and read) reaches the error.
Result<std::string> read_small_file(const std::filesystem::path& file, std::uint32_t pid) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return read_error(file, pid, errno);
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int error_number = errno;
            ::close(fd);
            return read_error(file, pid, error_number);
        }
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

// The real uid from the "Uid:" line of /proc/<pid>/status.
std::optional<std::uint32_t> real_uid(std::string_view status) {
    for (std::string_view line : split(status, '\n')) {
        if (!consume_prefix(line, "Uid:")) continue;
        while (!line.empty() && (line.front() == '\t' || line.front() == ' ')) line.remove_prefix(1);
        return parse_uid(line.substr(0, line.find_first_of("\t ")));
    }
    return std::nullopt;
}

std::string user_name(std::uint32_t uid) {
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(4096);
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) return found->pw_name;
    return std::to_string(uid);
}

}  // namespace

Result<std::string> cgroup_path_of(std::string_view text) {
    std::optional<std::string_view> unified, preferred, first;
    int preferred_rank = 99;
    static constexpr std::string_view ranked[] = {"memory", "cpu", "name=systemd"};
    for (std::string_view line : split(text, '\n')) {
        // hierarchy-id:controller-list:path (the path may itself hold ':').
        const std::size_t a = line.find(':');
        const std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
        if (b == std::string_view::npos) continue;
        const std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1),
                               path = line.substr(b + 1);
        if (path.empty()) continue;
        if (id == "0" && controllers.empty()) unified = path;
        if (!first) first = path;
        const auto names = split(controllers, ',');
        for (int rank = 0; rank < 3; ++rank) {
            if (rank < preferred_rank && std::find(names.begin(), names.end(), ranked[rank]) != names.end()) {
                preferred = path;
                preferred_rank = rank;
            }
        }
    }
    // On a hybrid host the unified line is often just "/" while v1 holds the real place.
    if (unified && *unified != "/") return std::string(*unified);
    if (preferred) return std::string(*preferred);
    if (first) return std::string(*first);
    return Error{ErrorCode::NotFound, "no cgroup line of the form <id>:<controllers>:<path>", {}};
}

CgroupWorkload parse_cgroup_path(std::string_view path) {
    CgroupWorkload out;
    for (std::string_view segment : split(path, '/')) {
        if (segment.empty()) continue;
        if (auto container = container_in_segment(segment)) {
            out.container_id = container->id;
            out.container_runtime = container->runtime;
            continue;
        }
        if (auto uid = pod_uid_in_segment(segment)) {
            out.pod_uid = *uid;
            // A new pod level: a container id above it belonged to an outer node (kind).
            out.container_id.clear();
            out.container_runtime.clear();
            continue;
        }
        std::string_view rest = segment;
        if (consume_prefix(rest, "job_") && is_digits(rest)) {
            out.slurm_job = rest;
        } else if (rest = segment; consume_prefix(rest, "step_") && !rest.empty()) {
            out.slurm_step = rest;
        } else if (rest = segment; consume_prefix(rest, "uid_") && is_digits(rest)) {
            out.slice_uid = parse_uid(rest);
        } else if (rest = segment; consume_prefix(rest, "user-") && rest.ends_with(".slice")) {
            rest.remove_suffix(6);
            if (is_digits(rest)) out.slice_uid = parse_uid(rest);
        }
    }
    return out;
}

Status check_proc_root(const std::filesystem::path& proc_root) {
    std::error_code error;
    if (std::filesystem::is_directory(proc_root, error)) return {};
    return Error{ErrorCode::InvalidConfig, fmt::format("--proc: {} is not a directory", proc_root.string()),
                 "give where the host's /proc is mounted (attribution and zeusd's --control-policy owner read who "
                 "runs each GPU process there)"};
}

WorkloadResolver::WorkloadResolver(std::filesystem::path proc_root) : proc_root_(std::move(proc_root)) {}

Result<Workload> WorkloadResolver::resolve(std::uint32_t pid) const {
    const std::filesystem::path dir = proc_root_ / std::to_string(pid);
    auto cgroup_text = read_small_file(dir / "cgroup", pid);
    if (!cgroup_text) return cgroup_text.error();
    Workload out;
    out.pid = pid;
    auto path = cgroup_path_of(*cgroup_text);
    if (!path) {
        return Error{ErrorCode::InvalidState, (dir / "cgroup").string() + " is malformed: " + path.error().message, {}};
    }
    out.cgroup = *path;
    const CgroupWorkload parsed = parse_cgroup_path(out.cgroup);
    out.container_id = parsed.container_id;
    out.container_runtime = parsed.container_runtime;
    out.pod_uid = parsed.pod_uid;
    out.slurm_job = parsed.slurm_job;
    out.slurm_step = parsed.slurm_step;
    if (out.container_id.empty()) out.unavailable.push_back("container: the cgroup path names no container");
    if (out.pod_uid.empty()) out.unavailable.push_back("pod: the cgroup path is not under kubepods");
    if (out.slurm_job.empty()) out.unavailable.push_back("slurm_job: the cgroup path has no job_<id>");

    auto status = read_small_file(dir / "status", pid);
    if (status) out.uid = real_uid(*status);
    if (!out.uid) out.uid = parsed.slice_uid;
    if (out.uid) {
        out.user = user_name(*out.uid);
    } else {
        out.unavailable.push_back(
            "user: " + (status ? (dir / "status").string() + " has no Uid line" : status.error().message) +
            " and the cgroup path has no user-<uid>.slice");
    }
    return out;
}

Result<ProcessOwner> WorkloadResolver::owner(std::uint32_t pid) const {
    const std::filesystem::path file = proc_root_ / std::to_string(pid) / "status";
    auto status = read_small_file(file, pid);
    if (!status) return status.error();
    const auto uid = real_uid(*status);
    if (!uid) return Error{ErrorCode::InvalidState, file.string() + " has no Uid line", {}};
    return ProcessOwner{*uid, user_name(*uid)};
}

}  // namespace zeus::attribution
