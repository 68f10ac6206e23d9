#include "slurm/plugin_options.hpp"

#include <fmt/format.h>

#include <set>
#include <string_view>

#include "zeus/platform/read_user_file.hpp"

namespace zeus::slurm {
namespace {

constexpr std::string_view kOptionList = "spool=DIR, zeusd=unix:PATH|HOST:PORT, token_file=PATH, stderr=yes|no";

Error option_error(std::string_view word, std::string_view problem, std::string_view fix) {
    return Error{ErrorCode::InvalidConfig, fmt::format("zeus_slurm option \"{}\" in plugstack.conf {}", word, problem),
                 fmt::format("{} (options: {})", fix, kOptionList), 0};
}

Result<ZeusdConfig> parse_zeusd(std::string_view word, std::string_view value) {
    constexpr std::string_view unix_prefix = "unix:";
    if (value.starts_with(unix_prefix)) {
        // What follows unix: is a socket path, never a host:port.
        value.remove_prefix(unix_prefix.size());
        if (!value.starts_with("/")) {
            return option_error(word, "names no absolute socket path after unix:",
                                "write zeusd=unix:/run/zeusd/zeusd.sock, or zeusd=HOST:PORT without unix: for TCP");
        }
    }
    if (value.starts_with("/")) return ZeusdConfig::unix_socket(std::string(value));
    auto tcp = parse_zeusd_host_port(value, "zeusd");
    if (!tcp.ok()) {
        return option_error(word, "names neither a socket path nor a host:port",
                            "write zeusd=unix:/run/zeusd/zeusd.sock or zeusd=127.0.0.1:4938");
    }
    return std::move(tcp).value();
}

Result<bool> parse_yes_no(std::string_view word, std::string_view value) {
    if (value == "yes") return true;
    if (value == "no") return false;
    return option_error(word, "is neither yes nor no", "write stderr=yes or stderr=no");
}

// A token is one line; the newline an editor adds is not part of it.
std::string trim_token(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
    return text;
}

Status apply_option(PluginOptions& options, std::string_view word) {
    const auto equals = word.find('=');
    if (equals == std::string_view::npos) {
        return option_error(word, "has no value", "write NAME=VALUE");
    }
    const std::string_view name = word.substr(0, equals);
    const std::string_view value = word.substr(equals + 1);
    if (value.empty()) return option_error(word, "has an empty value", "give the option a value or leave it out");
    if (name == "spool") {
        if (!value.starts_with("/")) {
            return option_error(word, "is not an absolute path", "write spool=/var/spool/zeus-slurm");
        }
        options.spool = std::string(value);
    } else if (name == "zeusd") {
        auto zeusd = parse_zeusd(word, value);
        if (!zeusd.ok()) return zeusd.error();
        options.zeusd = std::move(zeusd).value();
    } else if (name == "token_file") {
        options.token_file = std::string(value);
    } else if (name == "stderr") {
        auto yes = parse_yes_no(word, value);
        if (!yes.ok()) return yes.error();
        options.stderr_line = *yes;
    } else {
        return option_error(word, "is not an option of this plugin", "remove it or correct its name");
    }
    return {};
}

// The option's name, for a word that has one ("spool" of "spool=/x").
std::string_view option_name(std::string_view word) { return word.substr(0, word.find('=')); }

}  // namespace

Result<PluginOptions> parse_plugin_options(const std::vector<std::string>& words) {
    PluginOptions options;
    std::set<std::string_view> given;
    for (const auto& word : words) {
        if (auto applied = apply_option(options, word); !applied.ok()) return applied.error();
        // A second value would silently win: the line was likely edited in two places.
        if (!given.insert(option_name(word)).second) {
            return option_error(word, fmt::format("gives {}= a second time", option_name(word)),
                                "keep one value per option");
        }
    }
    if (!options.token_file.empty()) {
        auto token = read_user_file(options.token_file, UserInput{"zeusd token", "token_file="});
        if (!token.ok()) return token.error();
        std::string trimmed = trim_token(std::move(token).value());
        if (trimmed.empty()) {
            return option_error("token_file=" + options.token_file, "names an empty file",
                                "write the token `zeusd token issue` printed into it, or leave token_file out");
        }
        options.zeusd.token = std::move(trimmed);
    }
    options.zeusd.connect_timeout = kZeusdTimeout;
    options.zeusd.read_timeout = kZeusdTimeout;
    return options;
}

}  // namespace zeus::slurm
