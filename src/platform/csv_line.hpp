// Splitting one line of the project's CSV inputs (power traces, lowtime
// profiles) into fields. Header-only and free of libzeus so that the GPU
// simulator, which must not link libzeus, reads traces by the same rule
// (as it shares device/nvml/nvml_abi.h). Callers keep their own errors,
// which name the file, the line and the fix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zeus {

// Comma-separated fields without quoting; spaces and a '\r' (CRLF files)
// around a field are dropped; "a,b," has three fields, the last one empty.
inline std::vector<std::string> split_csv_line(std::string_view line) {
    const auto trimmed = [](std::string_view field) {
        while (!field.empty() && (field.back() == '\r' || field.back() == ' ')) field.remove_suffix(1);
        while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
        return std::string(field);
    };
    std::vector<std::string> fields;
    while (true) {
        const auto comma = line.find(',');
        fields.push_back(trimmed(line.substr(0, comma)));
        if (comma == std::string_view::npos) return fields;
        line.remove_prefix(comma + 1);
    }
}

}  // namespace zeus
