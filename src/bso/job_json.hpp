// JobSpec as the API's JSON (JobSpecFromClient / CreatedJob), shared by the
// server's Router and the C++ client.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/bso/algorithm.hpp"

namespace zeus::bso {

nlohmann::json job_spec_json(const JobSpec& spec);

}  // namespace zeus::bso
