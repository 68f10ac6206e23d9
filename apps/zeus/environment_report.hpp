// What `zeus show-env` found, as one JSON document: the human output is
// rendered from it, so both formats always say the same thing.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/device/gpus.hpp"

namespace zeus::cli {

// Probes `gpus` (including whether the power limit may be changed, which
// re-applies the current limit and so changes nothing).
[[nodiscard]] nlohmann::ordered_json describe_environment(Gpus& gpus, const GpuOptions& options);

// True when at least one GPU can be measured (energy counter or power).
[[nodiscard]] bool anything_measurable(const nlohmann::ordered_json& report);

[[nodiscard]] std::string render_human(const nlohmann::ordered_json& report);

}  // namespace zeus::cli
