// The comma-separated fields of one CSV line (no quoting: the project's data
// files have none), for tests that compute their expectations from data/.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace zeus::testing {

inline std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream in(line);
    std::string f;
    while (std::getline(in, f, ',')) out.push_back(f);
    return out;
}

}  // namespace zeus::testing
