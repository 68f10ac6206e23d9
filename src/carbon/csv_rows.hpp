// The small CSV reading the file providers share: a header naming the
// columns, comma-separated rows, blank lines and lines starting with # skipped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zeus/platform/error.hpp"

namespace zeus::carbon {

struct CsvRow {
    std::size_t line = 0;  // 1-based line number in the file
    std::vector<std::string> cells;
};

struct CsvTable {
    std::map<std::string, std::size_t> columns;  // header name (lower case, trimmed) -> index
    std::vector<CsvRow> rows;

    // The cell of `row` under the first of `names` the header has.
    [[nodiscard]] std::optional<std::string> cell(const CsvRow& row, std::initializer_list<const char*> names) const;
};

// Reads `path`; errors name the file and the fix. Rows with a different
// number of cells than the header are errors naming the line.
[[nodiscard]] Result<CsvTable> read_csv(const std::string& path, const std::string& text);

// `text` as a finite number, or nullopt (also for nan and inf).
[[nodiscard]] std::optional<double> parse_number(const std::string& text);

// The whole file without a byte-order mark, or an error naming it, which
// problem it has (platform/read_user_file.hpp) and `flag`.
[[nodiscard]] Result<std::string> read_text_file(const std::string& path, const char* what, const char* flag);

}  // namespace zeus::carbon
