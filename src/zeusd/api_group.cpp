#include "zeusd/api_group.hpp"

#include <array>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

constexpr std::array kGroups = {ApiGroup::GpuControl, ApiGroup::GpuRead, ApiGroup::CpuRead, ApiGroup::Metrics};

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1);
}

}  // namespace

std::string_view to_string(ApiGroup group) {
    switch (group) {
        case ApiGroup::GpuControl: return "gpu-control";
        case ApiGroup::GpuRead: return "gpu-read";
        case ApiGroup::CpuRead: return "cpu-read";
        case ApiGroup::Metrics: return "metrics";
    }
    return "unknown";
}

std::optional<ApiGroup> parse_api_group(std::string_view text) {
    for (const auto group : kGroups) {
        if (to_string(group) == text) return group;
    }
    return std::nullopt;
}

Result<ApiGroups> parse_api_groups(std::string_view comma_list) {
    ApiGroups groups;
    while (true) {
        const auto comma = comma_list.find(',');
        const auto name = trim(comma_list.substr(0, comma));
        const auto group = parse_api_group(name);
        if (!group) {
            return Error{ErrorCode::InvalidArgument,
                         name.empty() ? std::string("empty API group name in the list")
                                      : fmt::format("unknown API group '{}'", name),
                         "valid groups are gpu-control, gpu-read, cpu-read and metrics, separated by commas"};
        }
        groups.insert(*group);
        if (comma == std::string_view::npos) break;
        comma_list.remove_prefix(comma + 1);
    }
    return groups;
}

std::string join(const ApiGroups& groups) {
    std::string out;
    for (const auto group : groups) {
        if (!out.empty()) out += ',';
        out += to_string(group);
    }
    return out;
}

std::optional<ApiGroup> required_group(std::string_view path) {
    if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) return ApiGroup::GpuControl;
    if (path.starts_with("/gpu/")) return ApiGroup::GpuRead;
    if (path.starts_with("/cpu/")) return ApiGroup::CpuRead;
    if (path == "/metrics") return ApiGroup::Metrics;
    return std::nullopt;
}

}  // namespace zeus::zeusd
