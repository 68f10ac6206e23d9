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

}  // namespace

InstructionProfile read_instruction_profile(std::istream& csv, const std::string& source_name,
                                            const ProfileReadOptions& options) {
    std::string line;
    std::size_t line_number = 1;
    if (!read_csv_header(csv, line)) throw std::invalid_argument(source_name + ": empty profile (expected a CSV header)");
    const auto header = split_csv_line(line);
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
    const auto stage_col = column("stage", true), instruction_col = column("instruction", true),
               frequency_col = column("frequency", true), time_col = column("time", true),
               energy_col = column("energy", true), dp_col = column("dp_rank", false),
               rank_col = column("rank", false);

    // (stage, kind, frequency) -> dp_rank -> (max time, summed energy)
    std::map<std::tuple<std::size_t, InstructionKind, long long>, std::map<long long, std::pair<double, double>>> rows;
    std::map<std::tuple<std::size_t, InstructionKind, long long>, std::size_t> first_line;
    std::map<std::pair<std::size_t, InstructionKind>, std::vector<long long>> frequency_order;
    std::set<std::tuple<std::size_t, InstructionKind, long long, long long>> seen;
    while (std::getline(csv, line)) {
        ++line_number;
        if (line.empty() || line == "\r") continue;
        const Where where{source_name, line_number};
        const auto fields = split_csv_line(line);
        if (fields.size() != header.size())
            throw where.error("expected " + std::to_string(header.size()) + " fields, found " + std::to_string(fields.size()));
        const auto stage = static_cast<std::size_t>(parse_integer(fields[stage_col], "stage", where));
        std::string name = fields[instruction_col];
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        InstructionKind kind;
        if (name == "forward") kind = InstructionKind::kForward;
        else if (name == "backward") kind = InstructionKind::kBackward;
        else throw where.error("instruction must be 'forward' or 'backward', not '" + fields[instruction_col] + "'");
        const long long frequency = parse_integer(fields[frequency_col], "frequency", where);
        const double time = parse_double(fields[time_col], "time", where);
        const double energy = parse_double(fields[energy_col], "energy", where);
        if (time <= 0.0) throw where.error("time must be positive");
        const long long dp = dp_col >= 0 ? parse_integer(fields[dp_col], "dp_rank", where) : 0;
        const long long rank = rank_col >= 0 ? parse_integer(fields[rank_col], "rank", where) : -1;
        if (!seen.insert({stage, kind, frequency, rank}).second)
            throw where.error("duplicate row for stage " + std::to_string(stage) + " " + kind_name(kind) + " at " +
                              std::to_string(frequency) + " MHz" + (rank >= 0 ? " rank " + std::to_string(rank) : "") +
                              " (line " + std::to_string(first_line.at({stage, kind, frequency})) +
                              " has it): keep one measurement per (stage, instruction, frequency" +
                              (rank_col >= 0 ? ", rank" : "") + "), e.g. delete or average the repeats");
        first_line.emplace(std::make_tuple(stage, kind, frequency), line_number);
        auto& per_dp = rows[{stage, kind, frequency}];
        auto [it, fresh] = per_dp.emplace(dp, std::make_pair(time, energy));
        if (!fresh) {
            it->second.first = std::max(it->second.first, time);
            it->second.second += energy;
        }
        auto& order = frequency_order[{stage, kind}];
        if (std::find(order.begin(), order.end(), frequency) == order.end()) order.push_back(frequency);
    }
    if (rows.empty()) throw std::invalid_argument(source_name + ": the profile has no rows");

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
            auto& out = profile.measurements[{s, kind}];
            for (long long f : order->second) {
                const auto& per_dp = rows.at({s, kind, f});
                double time = 0.0, energy = 0.0;
                for (const auto& [dp, te] : per_dp) {
                    time += te.first;
                    energy += te.second;
                }
                const auto n = static_cast<double>(per_dp.size());
                out.push_back({f, per_dp.size() == 1 ? per_dp.begin()->second.first : time / n,
                               per_dp.size() == 1 ? per_dp.begin()->second.second : energy / n,
                               first_line.at({s, kind, f})});
            }
        }
    }
    return profile;
}

}  // namespace zeus::lowtime
