// Thread-local message of the last failure, behind zeusSimLastError().
#pragma once

#include <string>

namespace zeus::sim {

void set_last_error(std::string message);
const char* last_error();

}  // namespace zeus::sim
