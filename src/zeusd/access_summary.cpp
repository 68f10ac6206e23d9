#include "zeusd/access_summary.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <vector>

namespace zeus::zeusd {
namespace {

std::string group_name(gid_t gid) {
    if (const group* entry = ::getgrgid(gid)) return fmt::format("group '{}' (gid {})", entry->gr_name, gid);
    return fmt::format("gid {}", gid);
}

std::string user_name(uid_t uid) {
    if (const passwd* entry = ::getpwuid(uid)) return fmt::format("'{}' (uid {})", entry->pw_name, uid);
    return fmt::format("uid {}", uid);
}

// Who can connect to the socket: connect(2) needs write permission on it.
std::string socket_users(const ServeConfig& config) {
    const mode_t mode = config.socket_permissions;
    if ((mode & S_IWOTH) != 0) return fmt::format("every local user (socket mode {:o})", mode);
    std::vector<std::string> who;
    if ((mode & S_IWUSR) != 0) who.push_back(user_name(config.socket_uid ? *config.socket_uid : ::geteuid()));
    if ((mode & S_IWGRP) != 0) {
        who.push_back("members of " + (config.socket_gid ? group_name(*config.socket_gid) : group_name(::getegid())));
    }
    if (who.empty()) return fmt::format("nobody but root (socket mode {:o})", mode);
    return fmt::format("{} (socket mode {:o})", fmt::join(who, " and "), mode);
}

std::string control_users(const ServeConfig& config) {
    std::vector<std::string> who;
    for (const uid_t uid : config.control_users) who.push_back(user_name(uid));
    for (const gid_t gid : config.control_groups) who.push_back("members of " + group_name(gid));
    return fmt::format("{}", fmt::join(who, ", "));
}

}  // namespace

std::string access_summary(const ServeConfig& config, const ApiGroups& enabled, bool authenticated) {
    std::string who = config.mode == ListenMode::UnixSocket
                          ? fmt::format("{} on {}", socket_users(config), config.socket_path)
                          : fmt::format("anyone who can reach {}", config.tcp_bind_address);
    if (authenticated) who += ", holding a token signed with the --signing-key-path key,";
    std::string line = fmt::format("who may use zeusd: {} may use {}", who, join(enabled));
    if (enabled.contains(ApiGroup::GpuControl)) {
        if (config.control_policy == ControlPolicy::Owner) {
            line +=
                "; a GPU's settings change only while it is idle or runs only the client's own processes "
                "(--control-policy owner)";
        }
        if (!config.control_users.empty() || !config.control_groups.empty()) {
            line += fmt::format("; GPU control only for {}", control_users(config));
        } else if (config.mode == ListenMode::UnixSocket && (config.socket_permissions & S_IWOTH) != 0 &&
                   !authenticated && config.control_policy == ControlPolicy::Any) {
            line +=
                " (any user may change any GPU's power limit and clocks: --socket-permissions 660 --socket-gid "
                "zeus limits it to the zeus group, as the packaged service does; docs/zeusd.md)";
        }
    }
    return line;
}

}  // namespace zeus::zeusd
