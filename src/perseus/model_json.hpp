// The PFO API's models (common.py: JobInfo, RankInfo, FrequencySchedule,
// ProfilingResult) to and from JSON, with pydantic v1's validation: a body
// that does not fit its model throws ValidationError carrying FastAPI's 422
// `detail` list (loc, msg, type).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zeus/perseus/scheduler.hpp"

namespace zeus::perseus {

class ValidationError : public std::runtime_error {
  public:
    explicit ValidationError(nlohmann::json detail)
        : std::runtime_error(detail.dump()), detail_(std::move(detail)) {}
    [[nodiscard]] const nlohmann::json& detail() const { return detail_; }

  private:
    nlohmann::json detail_;
};

// One FastAPI validation problem: {"loc": loc, "msg": msg, "type": type}.
[[nodiscard]] ValidationError invalid(const std::vector<std::string>& loc, const std::string& msg,
                                      const std::string& type);

[[nodiscard]] JobInfo job_info_from_json(const nlohmann::json& body);
[[nodiscard]] RankInfo rank_info_from_json(const nlohmann::json& body);
[[nodiscard]] ProfilingResult profiling_result_from_json(const nlohmann::json& body);
[[nodiscard]] FrequencySchedule frequency_schedule_from_json(const nlohmann::json& body);

[[nodiscard]] nlohmann::json to_json(const JobInfo& job);
[[nodiscard]] nlohmann::json to_json(const RankInfo& rank);
[[nodiscard]] nlohmann::json to_json(const FrequencySchedule& schedule);
[[nodiscard]] nlohmann::json to_json(const ProfilingResult& result);

}  // namespace zeus::perseus
