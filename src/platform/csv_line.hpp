// Splitting one line of the project's CSV inputs (power traces, lowtime
// profiles, BSO traces, carbon and price series) into fields. Header-only
// and free of libzeus so that the GPU simulator, which must not link
// libzeus, reads traces by the same rule (as it shares device/nvml/nvml_abi.h). Callers keep their own errors,
// which name the file, the line and the fix.
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace zeus {

// Comma-separated fields without quoting; spaces, tabs and a '\r' (CRLF
// files) around a field are dropped; "a,b," has three fields, the last one
// empty.
inline std::vector<std::string> split_csv_line(std::string_view line) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    const auto trimmed = [&](std::string_view field) {
        while (!field.empty() && blank(field.back())) field.remove_suffix(1);
        while (!field.empty() && blank(field.front())) field.remove_prefix(1);
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

// Drops the UTF-8 byte-order mark that Excel and Windows editors put before
// a file's first line; without this the first column's name does not match.
inline void drop_utf8_bom(std::string& first_line) {
    if (first_line.starts_with("\xEF\xBB\xBF")) first_line.erase(0, 3);
}

// Reads a CSV file's header line into `line`, without a byte-order mark or
// a CRLF file's '\r'; false when the file has no first line.
inline bool read_csv_header(std::istream& in, std::string& line) {
    if (!std::getline(in, line)) return false;
    drop_utf8_bom(line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
}

}  // namespace zeus
