// What `zeus perseus solve` writes: the frontier as JSON, each point's
// per-stage schedule as JSON (lowtime::schedule_json), the original's
// freqs_pipeline_%05d.py list literal, and an SVG of the frontier.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "zeus/lowtime/perseus_plan.hpp"

namespace zeus::cli {

// {"stage,instruction": {a, b, c}} as written in frontier.json's "cost_models".
[[nodiscard]] std::map<lowtime::StageInstruction, lowtime::ExponentialCoefficients> parse_cost_models_json(
    const std::string& text, const std::string& source_name);

// `written`: the points (ascending) whose schedule files exist; the others' "schedule" is null.
[[nodiscard]] std::string frontier_json(const lowtime::PerseusPlan& plan, const std::vector<std::size_t>& written);
// The original's export for point `point` (>= 1), index point - 1 in its name.
[[nodiscard]] std::string freqs_pipeline_python(const lowtime::PerseusPlan& plan, std::size_t point);
[[nodiscard]] std::string frontier_svg(const lowtime::PerseusPlan& plan);

}  // namespace zeus::cli
