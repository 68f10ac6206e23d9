// The PFO API's models (common.py: JobInfo, RankInfo, FrequencySchedule,
// ProfilingResult) to and from JSON, with pydantic v1's validation: a body
// that does not fit its model throws ValidationError carrying FastAPI's 422
// `detail` list (loc, msg, type).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_server/fastapi.hpp"
#include "zeus/perseus/scheduler.hpp"

namespace zeus::perseus {

using http_server::fastapi::invalid;
using http_server::fastapi::ValidationError;

[[nodiscard]] JobInfo job_info_from_json(const nlohmann::json& body);
[[nodiscard]] RankInfo rank_info_from_json(const nlohmann::json& body);
[[nodiscard]] ProfilingResult profiling_result_from_json(const nlohmann::json& body);
[[nodiscard]] FrequencySchedule frequency_schedule_from_json(const nlohmann::json& body);

[[nodiscard]] nlohmann::json to_json(const JobInfo& job);
[[nodiscard]] nlohmann::json to_json(const RankInfo& rank);
[[nodiscard]] nlohmann::json to_json(const FrequencySchedule& schedule);
[[nodiscard]] nlohmann::json to_json(const ProfilingResult& result);

}  // namespace zeus::perseus
