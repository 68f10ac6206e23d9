#include "zeus/device/visible_devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace zeus {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
    return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    return std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
}

std::optional<long> parse_integer(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    long value = 0;
    const auto* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec != std::errc() || ptr != end || s.empty()) return std::nullopt;
    return value;
}

bool is_uuid_body(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == '-'; });
}

Error invalid(std::string_view variable, std::string_view value, std::string message) {
    return Error{ErrorCode::InvalidConfig, fmt::format("{}=\"{}\": {}", variable, value, message),
                 fmt::format("set {} to a comma-separated list of GPU indices (e.g. 0,1) or GPU UUIDs "
                             "(e.g. GPU-8932f937), as `nvidia-smi -L` lists them; unset it for every GPU",
                             variable),
                 0};
}

}  // namespace

Result<std::optional<std::vector<VisibleDeviceEntry>>> parse_visible_devices(std::optional<std::string_view> value,
                                                                             std::string_view variable) {
    using Entries = std::optional<std::vector<VisibleDeviceEntry>>;
    if (!value) return Entries{std::nullopt};
    std::vector<VisibleDeviceEntry> entries;
    if (trim(*value).empty()) return Entries{std::move(entries)};

    std::size_t position = 0;
    std::string_view rest = *value;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view raw = rest.substr(0, comma);
        const std::string_view entry = trim(raw);
        ++position;
        if (entry.empty()) {
            return invalid(variable, *value, fmt::format("entry {} is empty", position));
        }
        if (entry.starts_with("MIG-")) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("{}=\"{}\": entry {} (\"{}\") is a MIG instance; MIG is not supported because "
                                     "NVML reports energy and power only for whole GPUs",
                                     variable, *value, position, entry),
                         fmt::format("list whole GPUs in {} (index or GPU-UUID), or disable MIG mode", variable),
                         0};
        }
        if (starts_with_ci(entry, "GPU-") && !entry.starts_with("GPU-")) {
            // CUDA matches the keyword exactly; accepting "gpu-" here would
            // select a GPU that CUDA itself does not see.
            return invalid(variable, *value,
                           fmt::format("entry {} (\"{}\") must start with \"GPU-\" in upper case, as CUDA expects",
                                       position, entry));
        }
        if (entry.starts_with("GPU-")) {
            if (!is_uuid_body(entry.substr(4))) {
                return invalid(variable, *value,
                               fmt::format("entry {} (\"{}\") is not a GPU UUID: after \"GPU-\" only hexadecimal "
                                           "digits and dashes may follow",
                                           position, entry));
            }
            entries.emplace_back(DeviceUuidPrefix{std::string(entry)});
        } else if (auto ordinal = parse_integer(entry)) {
            entries.emplace_back(DeviceOrdinal{*ordinal});
        } else {
            return invalid(variable, *value,
                           fmt::format("entry {} (\"{}\") is neither a GPU index nor a GPU UUID", position, entry));
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return Entries{std::move(entries)};
}

Result<VisibleDeviceSelection> resolve_visible_devices(std::optional<std::string_view> value,
                                                       std::span<const PhysicalGpu> gpus, std::string_view variable) {
    auto parsed = parse_visible_devices(value, variable);
    if (!parsed) return parsed.error();

    VisibleDeviceSelection selection;
    if (!parsed.value()) {
        for (const auto& gpu : gpus) selection.physical_indices.push_back(gpu.index);
        return selection;
    }
    const auto& entries = *parsed.value();
    std::set<unsigned> seen;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::optional<unsigned> match;
        std::string problem;
        bool intentional = false;
        if (const auto* ordinal = std::get_if<DeviceOrdinal>(&entries[i])) {
            if (ordinal->value < 0) {
                intentional = true;
                problem = fmt::format("{} is negative", ordinal->value);
            } else if (static_cast<std::size_t>(ordinal->value) >= gpus.size()) {
                problem = fmt::format("GPU {} does not exist (there {} {} GPU{}{})", ordinal->value,
                                      gpus.size() == 1 ? "is" : "are", gpus.size(), gpus.size() == 1 ? "" : "s",
                                      gpus.empty() ? "" : fmt::format(", 0 to {}", gpus.size() - 1));
            } else {
                match = gpus[static_cast<std::size_t>(ordinal->value)].index;
            }
        } else {
            const auto& prefix = std::get<DeviceUuidPrefix>(entries[i]).prefix;
            std::vector<unsigned> matches;
            for (const auto& gpu : gpus) {
                if (!gpu.uuid.empty() && starts_with_ci(gpu.uuid, prefix)) matches.push_back(gpu.index);
            }
            if (matches.size() == 1) {
                match = matches.front();
            } else if (matches.empty()) {
                problem = fmt::format("no GPU's UUID starts with \"{}\"", prefix);
            } else {
                problem = fmt::format("\"{}\" is ambiguous: it matches {} GPUs", prefix, matches.size());
            }
        }
        if (match && !seen.insert(*match).second) {
            // CUDA makes no device visible when one is listed twice.
            selection.warnings.push_back(fmt::format(
                "{}=\"{}\": GPU {} is listed twice; as CUDA does, no GPU is visible", variable, *value, *match));
            selection.physical_indices.clear();
            return selection;
        }
        if (!match) {
            if (!intentional || i + 1 < entries.size()) {
                selection.warnings.push_back(fmt::format(
                    "{}=\"{}\": entry {} ignored: {}; as CUDA does, it and every entry after it are hidden, so "
                    "{} GPU{} visible",
                    variable, *value, i + 1, problem, selection.physical_indices.size(),
                    selection.physical_indices.size() == 1 ? " is" : "s are"));
            }
            break;
        }
        selection.physical_indices.push_back(*match);
    }
    return selection;
}

}  // namespace zeus
