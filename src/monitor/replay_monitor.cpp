#include "zeus/monitor/replay_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "platform/csv_line.hpp"
#include "zeus/platform/read_user_file.hpp"

namespace zeus {
namespace {

constexpr std::string_view kFixedColumns = "start_time,window_name,elapsed_time";

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> fields;
    while (true) {
        const auto comma = line.find(',');
        fields.push_back(line.substr(0, comma));
        if (comma == std::string_view::npos) return fields;
        line.remove_prefix(comma + 1);
    }
}

std::optional<double> parse_double(std::string_view text) {
    double value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

Error malformed(const std::filesystem::path& path, std::size_t line, const std::string& what) {
    return Error{ErrorCode::InvalidConfig, fmt::format("window log {} line {}: {}", path.string(), line, what),
                 "give a log written by EnergyMonitor (log_file) or the original ZeusMonitor(log_file=...)", 0};
}

Result<std::vector<unsigned>> parse_header(const std::filesystem::path& path, std::string_view header) {
    if (!header.starts_with(kFixedColumns)) {
        return malformed(path, 1, fmt::format("the header does not start with '{}'", kFixedColumns));
    }
    std::vector<unsigned> gpus;
    const auto rest = header.substr(kFixedColumns.size());
    if (rest.empty()) return gpus;
    if (rest.front() != ',') return malformed(path, 1, "unexpected header after 'elapsed_time'");
    for (std::string_view column : split(rest.substr(1))) {
        unsigned index = 0;
        const bool framed = column.starts_with("gpu") && column.ends_with("_energy") && column.size() > 10;
        const auto digits = framed ? column.substr(3, column.size() - 10) : std::string_view{};
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (!framed || ec != std::errc{} || ptr != digits.data() + digits.size()) {
            return malformed(path, 1, fmt::format("column '{}' is not gpu<index>_energy", column));
        }
        if (std::find(gpus.begin(), gpus.end(), index) != gpus.end()) {
            return malformed(path, 1, fmt::format("GPU {} has two columns", index));
        }
        gpus.push_back(index);
    }
    return gpus;
}

}  // namespace

Result<WindowLogContents> read_window_log(const std::filesystem::path& path) {
    auto file = read_user_file(path.string(), {"window log", "--log (log_file)"});
    if (!file) return file.error();
    std::istringstream in(*file);
    std::string line;
    if (!read_csv_header(in, line)) return malformed(path, 1, "the file is empty (no header)");
    auto gpus = parse_header(path, line);
    if (!gpus) return gpus.error();
    WindowLogContents contents{std::move(gpus).value(), {}};
    const std::size_t energy_columns = contents.gpu_indices.size();
    for (std::size_t number = 2; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const auto fields = split(line);
        // The original does not quote names: a name with commas spans fields.
        if (fields.size() < 3 + energy_columns) {
            return malformed(path, number, fmt::format("{} fields, expected {}", fields.size(), 3 + energy_columns));
        }
        const std::size_t name_fields = fields.size() - 2 - energy_columns;
        LoggedWindow window;
        window.start_time = std::string(fields[0]);
        const auto name_begin = fields[1].data();
        const auto name_end = fields[name_fields].data() + fields[name_fields].size();
        window.name = std::string(name_begin, name_end);
        const auto elapsed = parse_double(fields[1 + name_fields]);
        if (!elapsed || *elapsed < 0) {
            return malformed(path, number, fmt::format("elapsed_time '{}' is not a non-negative number",
                                                       fields[1 + name_fields]));
        }
        window.elapsed = Seconds(*elapsed);
        for (std::size_t k = 0; k < energy_columns; ++k) {
            const auto text = fields[2 + name_fields + k];
            const auto energy = parse_double(text);
            if (text == "nan") {  // what EnergyMonitor logs for a GPU lost in the window
                return malformed(path, number,
                                 fmt::format("gpu{}_energy 'nan': the GPU was lost in this window, its energy is "
                                             "unknown and cannot be replayed (record the log again, or remove the row)",
                                             contents.gpu_indices[k]));
            }
            if (!energy) {
                return malformed(path, number,
                                 fmt::format("gpu{}_energy '{}' is not a number", contents.gpu_indices[k], text));
            }
            window.gpu_energy.emplace_back(*energy);
        }
        contents.windows.push_back(std::move(window));
    }
    return contents;
}

Result<std::unique_ptr<ReplayMonitor>> ReplayMonitor::open(const std::filesystem::path& log) {
    auto contents = read_window_log(log);
    if (!contents) return contents.error();
    return std::make_unique<ReplayMonitor>(std::move(contents).value());
}

ReplayMonitor::ReplayMonitor(WindowLogContents contents) : contents_(std::move(contents)) {}

Status ReplayMonitor::begin_window(std::string_view name, bool, bool restart) {
    const auto it = std::find(open_.begin(), open_.end(), name);
    if (it != open_.end()) {
        if (restart) return {};
        return Error{ErrorCode::InvalidState, fmt::format("measurement window '{}' already exists", name),
                     "end it first, or begin it with restart", 0};
    }
    open_.emplace_back(name);
    return {};
}

Result<Measurement> ReplayMonitor::end_window(std::string_view name, bool, bool cancel) {
    const auto it = std::find(open_.begin(), open_.end(), name);
    if (it == open_.end()) {
        return Error{ErrorCode::NotFound, fmt::format("measurement window '{}' does not exist", name),
                     "begin it before ending it", 0};
    }
    Measurement m;
    if (cancel) {
        open_.erase(it);
        for (unsigned gpu : contents_.gpu_indices) m.gpu_energy[gpu] = EnergyValue{Joules(0.0), EnergySource::WindowLog, {}};
        return m;
    }
    if (next_row_ >= contents_.windows.size()) {
        return Error{ErrorCode::NoData,
                     fmt::format("window '{}' ended, but every one of the log's {} rows was already replayed", name,
                                 contents_.windows.size()),
                     "replay a log recorded with the same schedule (steps, limits) as this run", 0};
    }
    const LoggedWindow& row = contents_.windows[next_row_];
    if (row.name != name) {
        return Error{ErrorCode::InvalidState,
                     fmt::format("window '{}' ended, but the log's next row (row {}) is window '{}'", name,
                                 next_row_ + 1, row.name),
                     "replay a log recorded with the same schedule (steps, limits) as this run", 0};
    }
    open_.erase(it);
    ++next_row_;
    m.time = row.elapsed;
    for (std::size_t k = 0; k < contents_.gpu_indices.size(); ++k) {
        m.gpu_energy[contents_.gpu_indices[k]] = EnergyValue{row.gpu_energy[k], EnergySource::WindowLog, {}};
    }
    return m;
}

std::vector<std::string> ReplayMonitor::reset_windows() { return std::exchange(open_, {}); }

std::vector<std::string> ReplayMonitor::open_windows() const {
    auto names = open_;
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace zeus
