// The line zeusd logs first: who may use it, from the socket's mode and
// group, the TCP address, the signing key and the control allow-lists, so an
// operator who starts it by hand sees at once whether strangers can change
// their GPUs' settings.
#pragma once

#include <string>

#include "zeusd/api_group.hpp"
#include "zeusd/serve_config.hpp"

namespace zeus::zeusd {

[[nodiscard]] std::string access_summary(const ServeConfig& config, const ApiGroups& enabled, bool authenticated);

}  // namespace zeus::zeusd
