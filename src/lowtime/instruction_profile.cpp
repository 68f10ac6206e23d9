#include "zeus/lowtime/instruction_profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "platform/csv_line.hpp"

namespace zeus::lowtime {

namespace {

struct Where {
    const std::string& source;
    std::size_t line;
    [[nodiscard]] std::invalid_argument error(const std::string& what) const {
        return std::invalid_argument(source + ":" + std::to_string(line) + ": " + what);
    }
};

double parse_double(const std::string& text, const char* column, const Where& where) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
        throw where.error(std::string("column '") + column + "' is not a finite number: '" + text + "'");
    return value;
}

long long parse_integer(const std::string& text, const char* column, const Where& where) {
    const double value = parse_double(text, column, where);
    if (value != std::floor(value) || value < 0)
        throw where.error(std::string("column '") + column + "' must be a non-negative integer: '" + text + "'");
    return static_cast<long long>(value);
}

const char* kind_name(InstructionKind kind) { return kind == InstructionKind::kForward ? "forward" : "backward"; }

// Where each column is in the header; -1 for an optional one that is absent.
struct Columns {
    std::ptrdiff_t stage, instruction, frequency, time, energy, dp_rank, rank;
};

Columns find_columns(const std::vector<std::string>& header, const std::string& source_name) {
    auto column = [&](const char* name, bool required) -> std::ptrdiff_t {
        const auto it = std::find(header.begin(), header.end(), name);
        if (it == header.end()) {
            if (required)
                throw std::invalid_argument(source_name + ":1: missing column '" + name +
                                            "' (expected stage,instruction,frequency,time,energy)");
            return -1;
        }
        return it - header.begin();
    };
    return Columns{column("stage", true),  column("instruction", true), column("frequency", true), column("time", true),
                   column("energy", true), column("dp_rank", false),    column("rank", false)};
}

struct ProfileRow {
    std::size_t stage = 0;
    InstructionKind kind = InstructionKind::kForward;
    long long frequency = 0;
    double time = 0.0;
    double energy = 0.0;
    long long dp_rank = 0;
    long long rank = -1;  // -1: no rank column
};

ProfileRow parse_row(const std::vector<std::string>& fields, const Columns& columns, const Where& where) {
    ProfileRow row;
    row.stage = static_cast<std::size_t>(parse_integer(fields[columns.stage], "stage", where));
    std::string name = fields[columns.instruction];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == "forward")
        row.kind = InstructionKind::kForward;
    else if (name == "backward")
        row.kind = InstructionKind::kBackward;
    else
        throw where.error("instruction must be 'forward' or 'backward', not '" + fields[columns.instruction] + "'");
    row.frequency = parse_integer(fields[columns.frequency], "frequency", where);
    row.time = parse_double(fields[columns.time], "time", where);
    row.energy = parse_double(fields[columns.energy], "energy", where);
    if (row.time <= 0.0) throw where.error("time must be positive");
    if (columns.dp_rank >= 0) row.dp_rank = parse_integer(fields[columns.dp_rank], "dp_rank", where);
    if (columns.rank >= 0) row.rank = parse_integer(fields[columns.rank], "rank", where);
    return row;
}

using MeasurementKey = std::tuple<std::size_t, InstructionKind, long long>;  // (stage, kind, frequency)

// The rows read so far, grouped for the profile.
struct ProfileRows {
    // (stage, kind, frequency) -> dp_rank -> (max time, summed energy)
    std::map<MeasurementKey, std::map<long long, std::pair<double, double>>> rows;
    std::map<MeasurementKey, std::size_t> first_line;
    std::map<std::pair<std::size_t, InstructionKind>, std::vector<long long>> frequency_order;
    std::set<std::tuple<std::size_t, InstructionKind, long long, long long>> seen;

    // Ranks of one data-parallel replica add their energy and take the
    // longest time; a (stage, kind, frequency, rank) twice is an error.
    void add(const ProfileRow& row, const Where& where, bool has_rank_column) {
        const MeasurementKey key{row.stage, row.kind, row.frequency};
        if (!seen.insert({row.stage, row.kind, row.frequency, row.rank}).second)
            throw where.error("duplicate row for stage " + std::to_string(row.stage) + " " + kind_name(row.kind) +
                              " at " + std::to_string(row.frequency) + " MHz" +
                              (row.rank >= 0 ? " rank " + std::to_string(row.rank) : "") + " (line " +
                              std::to_string(first_line.at(key)) +
                              " has it): keep one measurement per (stage, instruction, frequency" +
                              (has_rank_column ? ", rank" : "") + "), e.g. delete or average the repeats");
        first_line.emplace(key, where.line);
        auto& per_dp = rows[key];
        auto [it, fresh] = per_dp.emplace(row.dp_rank, std::make_pair(row.time, row.energy));
        if (!fresh) {
            it->second.first = std::max(it->second.first, row.time);
            it->second.second += row.energy;
        }
        auto& order = frequency_order[{row.stage, row.kind}];
        if (std::find(order.begin(), order.end(), row.frequency) == order.end()) order.push_back(row.frequency);
    }
};

ProfileRows read_rows(std::istream& csv, const std::string& source_name, const std::vector<std::string>& header,
                      const Columns& columns) {
    ProfileRows rows;
    std::string line;
    std::size_t line_number = 1;
    while (std::getline(csv, line)) {
        ++line_number;
        if (line.empty() || line == "\r") continue;
        const Where where{source_name, line_number};
        const auto fields = split_csv_line(line);
        if (fields.size() != header.size())
            throw where.error("expected " + std::to_string(header.size()) + " fields, found " + std::to_string(fields.size()));
        rows.add(parse_row(fields, columns, where), where, columns.rank >= 0);
    }
    if (rows.rows.empty()) throw std::invalid_argument(source_name + ": the profile has no rows");
    return rows;
}

// One (stage, kind)'s measurements in the order their frequencies first
// appeared, each the mean over the data-parallel replicas.
std::vector<InstructionMeasurement> averaged_measurements(const ProfileRows& rows, std::size_t stage,
                                                          InstructionKind kind, const std::vector<long long>& order) {
    std::vector<InstructionMeasurement> out;
    for (long long f : order) {
        const auto& per_dp = rows.rows.at({stage, kind, f});
        double time = 0.0, energy = 0.0;
        for (const auto& [dp, te] : per_dp) {
            time += te.first;
            energy += te.second;
        }
        const auto n = static_cast<double>(per_dp.size());
        out.push_back({f, per_dp.size() == 1 ? per_dp.begin()->second.first : time / n,
                       per_dp.size() == 1 ? per_dp.begin()->second.second : energy / n,
                       rows.first_line.at({stage, kind, f})});
    }
    return out;
}

InstructionProfile build_profile(const ProfileRows& rows, const std::string& source_name,
                                 const ProfileReadOptions& options) {
    const auto& frequency_order = rows.frequency_order;
    InstructionProfile profile;
    std::size_t max_stage = 0;
    for (const auto& [key, _] : frequency_order) max_stage = std::max(max_stage, key.first);
    profile.stages = max_stage + 1;
    std::set<long long> all_frequencies;
    for (const auto& [key, order] : frequency_order) all_frequencies.insert(order.begin(), order.end());
    for (std::size_t s = 0; s < profile.stages; ++s) {
        for (auto kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
            const auto order = frequency_order.find({s, kind});
            if (order == frequency_order.end())
                throw std::invalid_argument(source_name + ": no " + kind_name(kind) + " rows for stage " + std::to_string(s) +
                                            " (stages must be numbered 0.." + std::to_string(max_stage) +
                                            " with both instructions profiled)");
            if (!options.allow_differing_frequencies)
                for (long long f : all_frequencies)
                    if (std::find(order->second.begin(), order->second.end(), f) == order->second.end())
                        throw std::invalid_argument(source_name + ": stage " + std::to_string(s) + " " + kind_name(kind) +
                                                    " has no row at " + std::to_string(f) +
                                                    " MHz, which other instructions have (profile it, or pass "
                                                    "--allow-differing-frequencies)");
            profile.measurements[{s, kind}] = averaged_measurements(rows, s, kind, order->second);
        }
    }
    return profile;
}

}  // namespace

InstructionProfile read_instruction_profile(std::istream& csv, const std::string& source_name,
                                            const ProfileReadOptions& options) {
    std::string line;
    if (!read_csv_header(csv, line))
        throw std::invalid_argument(source_name + ": empty profile (expected a CSV header)");
    const auto header = split_csv_line(line);
    const Columns columns = find_columns(header, source_name);
    return build_profile(read_rows(csv, source_name, header, columns), source_name, options);
}

}  // namespace zeus::lowtime
