#include "monitor/power_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace zeus::monitor_detail {

Result<std::vector<unsigned>> select_gpus(const Gpus& gpus, const std::vector<unsigned>& requested) {
    std::vector<unsigned> indices;
    if (requested.empty()) {
        for (std::size_t i = 0; i < gpus.size(); ++i) {
            if (gpus[i].available()) indices.push_back(static_cast<unsigned>(i));
        }
        if (indices.empty()) {
            if (!gpus.status().ok()) {
                return Error{ErrorCode::NotFound, "no GPU to monitor: " + gpus.status().error().message,
                             gpus.status().error().hint, gpus.status().error().vendor_code};
            }
            return Error{ErrorCode::NotFound,
                         gpus.empty() ? std::string("no GPU to monitor: no GPU is visible")
                                      : std::string("no GPU to monitor: every visible GPU failed to initialise"),
                         "run `zeus show-env` to see the GPUs and why they cannot be used", 0};
        }
        return indices;
    }
    for (unsigned i : requested) {
        if (i >= gpus.size()) {
            return Error{ErrorCode::InvalidArgument,
                         gpus.empty() ? fmt::format("GPU index {} does not exist: no GPU is visible", i)
                                      : fmt::format("GPU index {} does not exist: the visible GPUs are 0 to {}", i,
                                                    gpus.size() - 1),
                         "pass visible (CUDA_VISIBLE_DEVICES-relative) GPU indices", 0};
        }
        if (auto status = gpus[i].status(); !status) {
            return Error{ErrorCode::Unavailable, fmt::format("GPU {} cannot be monitored: {}", i, status.error().message),
                         status.error().hint, status.error().vendor_code};
        }
        if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.push_back(i);
    }
    return indices;
}

}  // namespace zeus::monitor_detail
