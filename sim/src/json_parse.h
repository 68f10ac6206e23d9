// JSON parsing for the configuration with errors that name the file and, when
// the parser fails inside a value (e.g. a number overflowing a double), the
// key path it was reading.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace zeus::sim {

// Throws ConfigError "zeus-sim config <source>: ...".
nlohmann::json parse_config_json(const std::string& text, const std::string& source);

}  // namespace zeus::sim
