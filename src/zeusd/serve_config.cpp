#include "zeusd/serve_config.hpp"

#include <cstdlib>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= list.size()) {
        const auto comma = list.find(',', start);
        auto item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const auto first = item.find_first_not_of(" \t");
        const auto last = item.find_last_not_of(" \t");
        items.push_back(first == std::string::npos ? std::string{} : item.substr(first, last - first + 1));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return items;
}

bool all_digits(const std::string& text) {
    return !text.empty() && text.size() <= 10 && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

Result<uid_t> parse_user(const std::string& text) {
    if (all_digits(text)) return static_cast<uid_t>(std::stoul(text));
    if (const passwd* entry = ::getpwnam(text.c_str()); entry != nullptr) return entry->pw_uid;
    return Error{ErrorCode::InvalidConfig, fmt::format("no user named '{}'", text),
                 "give an existing user name or a numeric uid"};
}

Result<gid_t> parse_group(const std::string& text) {
    if (all_digits(text)) return static_cast<gid_t>(std::stoul(text));
    if (const group* entry = ::getgrnam(text.c_str()); entry != nullptr) return entry->gr_gid;
    return Error{ErrorCode::InvalidConfig, fmt::format("no group named '{}'", text),
                 "give an existing group name or a numeric gid"};
}

namespace {

// A comma list of names or numbers, each through `parse_one`.
template <class Id, class Parse>
Result<std::set<Id>> parse_list(const std::string& list, const char* what, Parse parse_one) {
    std::set<Id> ids;
    for (const auto& item : split_list(list)) {
        if (item.empty()) {
            return Error{ErrorCode::InvalidConfig, fmt::format("empty {} in the list", what),
                         "separate names with single commas"};
        }
        auto id = parse_one(item);
        if (!id) return id.error();
        ids.insert(id.value());
    }
    return ids;
}

}  // namespace

Result<std::set<uid_t>> parse_users(const std::string& list) { return parse_list<uid_t>(list, "user", parse_user); }

Result<std::set<gid_t>> parse_groups(const std::string& list) { return parse_list<gid_t>(list, "group", parse_group); }

std::string default_ledger_path(const ServeConfig& config) {
    if (config.mode == ListenMode::UnixSocket) return config.socket_path + ".ledger.json";
    const char* runtime = std::getenv("RUNTIME_DIRECTORY");
    const std::string directory = runtime != nullptr && *runtime != '\0' ? runtime : "/run/zeusd";
    const auto colon = config.tcp_bind_address.rfind(':');
    const auto port = colon == std::string::npos ? config.tcp_bind_address : config.tcp_bind_address.substr(colon + 1);
    // Port 0 ("0", "00"): the kernel picks the port, so a successor cannot
    // find the ledger by it, and a name shared by every zeusd on port 0 would
    // let one starting up undo the changes of clients of another that runs.
    if (!port.empty() && port.find_first_not_of('0') == std::string::npos) {
        return directory + "/zeusd-tcp-0-pid" + std::to_string(::getpid()) + ".ledger.json";
    }
    return directory + "/zeusd-tcp-" + port + ".ledger.json";
}

}  // namespace zeus::zeusd
