#include "slurm/gpu_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace zeus::slurm {

Result<std::vector<unsigned>> parse_gpu_list(std::string_view variable, std::string_view value) {
    if (value.ends_with(',')) {
        return Error{ErrorCode::InvalidConfig, fmt::format("{}=\"{}\" ends with a comma", variable, value),
                     "list the job's GPUs by index, e.g. 0,1", 0};
    }
    std::vector<unsigned> ids;
    std::string_view rest = value;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        unsigned id = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (item.empty() || ec != std::errc{} || end != item.data() + item.size()) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("{}=\"{}\" holds \"{}\", which is not a GPU index", variable, value, item),
                         "list the job's GPUs by index (gres.conf in NVML order); GPU UUIDs and MIG devices "
                         "are not measured by this plugin",
                         0};
        }
        ids.push_back(id);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

Result<GpuSelection> select_gpus(const EnvironmentLookup& lookup) {
    constexpr std::array<std::string_view, 3> kSources = {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"};
    for (const auto source : kSources) {
        const auto value = lookup(source);
        if (!value) continue;
        auto ids = parse_gpu_list(source, *value);
        if (!ids.ok()) return ids.error();
        return GpuSelection{std::move(ids).value(), std::string(source)};
    }
    return GpuSelection{};
}

}  // namespace zeus::slurm
