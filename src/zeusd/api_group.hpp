// The daemon's API groups and which group guards which path (the original's
// auth.rs): /discover and /time need none, /gpu/set_* and /gpu/reset_* need
// gpu-control, other /gpu/* gpu-read, /cpu/* cpu-read; /metrics (ours, off by
// default) metrics.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "zeus/platform/error.hpp"

namespace zeus::zeusd {

// Declared in the order the original serializes them.
enum class ApiGroup { GpuControl, GpuRead, CpuRead, Metrics };

using ApiGroups = std::set<ApiGroup>;

// "gpu-control", "gpu-read", "cpu-read", "metrics".
[[nodiscard]] std::string_view to_string(ApiGroup group);
[[nodiscard]] std::optional<ApiGroup> parse_api_group(std::string_view text);
// A comma list as --enable takes it; an unknown or empty name is an
// InvalidArgument naming the valid ones.
[[nodiscard]] Result<ApiGroups> parse_api_groups(std::string_view comma_list);
// "gpu-control,gpu-read,cpu-read" in serialization order.
[[nodiscard]] std::string join(const ApiGroups& groups);

// The group a request path needs; nullopt for paths that need none.
[[nodiscard]] std::optional<ApiGroup> required_group(std::string_view path);

}  // namespace zeus::zeusd
