// The error of a simulator configuration that cannot be used: thrown by the
// JSON reader (json_parse.h) and the configuration's checks (config.h), with
// a message that names the file and the key.
#pragma once

#include <stdexcept>

namespace zeus::sim {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace zeus::sim
