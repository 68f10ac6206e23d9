#include "carbon/csv_rows.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "platform/csv_line.hpp"
#include "zeus/platform/read_user_file.hpp"

namespace zeus::carbon {

namespace {

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

std::optional<std::string> CsvTable::cell(const CsvRow& row, std::initializer_list<const char*> names) const {
    for (const char* name : names) {
        if (const auto it = columns.find(name); it != columns.end()) return row.cells.at(it->second);
    }
    return std::nullopt;
}

std::optional<double> parse_number(const std::string& text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    // from_chars reads "nan" and "inf": a rate that would print "Cost: nan USD".
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

Result<std::string> read_text_file(const std::string& path, const char* what, const char* flag) {
    return read_user_file(path, {what, flag});
}

Result<CsvTable> read_csv(const std::string& path, const std::string& text) {
    CsvTable table;
    std::istringstream in(text);
    std::string line;
    std::size_t number = 0;
    std::size_t width = 0;
    while (std::getline(in, line)) {
        ++number;
        const std::string content = trim(line);
        if (content.empty() || content.front() == '#') continue;
        auto cells = split_csv_line(content);
        if (table.columns.empty()) {
            for (std::size_t i = 0; i < cells.size(); ++i) {
                std::string name = cells[i];
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                table.columns[name] = i;
            }
            width = cells.size();
            continue;
        }
        if (cells.size() != width) {
            return Error{ErrorCode::InvalidConfig,
                         fmt::format("{} line {}: {} values where the header has {} columns", path, number,
                                     cells.size(), width),
                         "give one value per header column on every line", 0};
        }
        table.rows.push_back(CsvRow{number, std::move(cells)});
    }
    if (table.columns.empty()) {
        return Error{ErrorCode::InvalidConfig, fmt::format("{} is empty: no header line", path),
                     "start the file with its header line", 0};
    }
    return table;
}

}  // namespace zeus::carbon
