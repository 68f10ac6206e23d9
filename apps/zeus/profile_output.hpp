// What `zeus profile` prints: reports as JSON, the SVG plot of energy mean ±
// std per swept value, and the progress line. Pure functions of the
// profiler's results, unit-tested with hand-built reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/profile/profile.hpp"
#include "zeus/profile/recommendation.hpp"

namespace zeus::cli {

[[nodiscard]] nlohmann::json trial_json(const profile::TrialResult& t);
[[nodiscard]] nlohmann::json report_json(const profile::SweepReport& report);
// {"reports": [...], "recommendation": {...} | null, "trial_stddev_threshold": J, "simulated": bool}
[[nodiscard]] nlohmann::json reports_json(const std::vector<profile::SweepReport>& reports,
                                          const std::optional<profile::Recommendation>& recommendation,
                                          double threshold, bool simulated);

// One panel per report, side by side: energy per iteration (mean, with a
// bar of ± one standard deviation) against the swept value, VALID points
// filled, INVALID ones hollow. Self-contained SVG 1.1.
[[nodiscard]] std::string render_svg(const std::vector<profile::SweepReport>& reports, double threshold);

// "[ 12/41] Trial 3/10 done  elapsed 0:12  ETA 1:05"
[[nodiscard]] std::string progress_line(const profile::ProgressEvent& event);
// "1:05", "1:02:03"
[[nodiscard]] std::string clock_text(double seconds);

}  // namespace zeus::cli
