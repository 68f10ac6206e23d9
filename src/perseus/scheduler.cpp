#include "zeus/perseus/scheduler.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace zeus::perseus {

std::string make_job_id(const JobInfo& job, const std::string& scheduler_name, std::time_t now) {
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H-%M-%S", &local);
    std::string id = std::string(stamp) + "+dp" + std::to_string(job.dp_degree) + "+pp" + std::to_string(job.pp_degree) +
                     "+tp" + std::to_string(job.tp_degree) + "+" + scheduler_name;
    if (!job.job_metadata.empty()) id += "+" + job.job_metadata;
    return id;
}

namespace {

// A recursive-descent reader for exactly the literals a solution holds:
// lists/tuples of lists/tuples of (string, integer), '#' comments to line end.
class SolutionReader {
public:
    SolutionReader(const std::string& text, const std::string& source) : text_(text), source_(source) {}

    std::vector<std::vector<InstructionFrequency>> read() {
        std::vector<std::vector<InstructionFrequency>> out;
        sequence([&] {
            std::vector<InstructionFrequency> entry;
            sequence([&] {
                const char close = open();
                InstructionFrequency pair;
                const std::size_t name_at = pos_;
                pair.first = string();
                check_instruction(pair.first, name_at);
                expect(',');
                const std::size_t frequency_at = pos_;
                pair.second = integer();
                check_frequency(pair.second, frequency_at);
                skip();
                if (peek() == ',') ++pos_;  // trailing comma
                expect(close);
                entry.push_back(std::move(pair));
            });
            out.push_back(std::move(entry));
        });
        skip();
        if (pos_ != text_.size()) fail("unexpected text after the solution");
        return out;
    }

private:
    template <typename F>
    void sequence(F element) {
        const char close = open();
        skip();
        while (peek() != close) {
            element();
            skip();
            if (peek() == ',') {
                ++pos_;
                skip();
            } else if (peek() != close) {
                fail(std::string("expected ',' or '") + close + "'");
            }
        }
        ++pos_;
    }
    char open() {
        skip();
        if (peek() == '[') return ++pos_, ']';
        if (peek() == '(') return ++pos_, ')';
        fail("expected '[' or '('");
    }
    std::string string() {
        skip();
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("expected a quoted instruction name");
        const auto end = text_.find(quote, ++pos_);
        if (end == std::string::npos) fail("unterminated string");
        std::string s = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        return s;
    }
    long long integer() {
        skip();
        const std::size_t start = pos_;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
        if (start == pos_) fail("expected a frequency (integer MHz)");
        if (pos_ - start > 9) fail("a frequency of " + text_.substr(start, pos_ - start) + " MHz is out of range");
        return std::stoll(text_.substr(start, pos_ - start));
    }
    // Instruction names are what the training framework calls its
    // instructions ("forward", "backward"): identifiers. Anything else (bytes
    // that are not text, quotes, spaces) can match no instruction, and a name
    // that is not UTF-8 cannot even be sent in a JSON schedule.
    void check_instruction(const std::string& name, std::size_t at) const {
        const bool identifier =
            !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
            std::all_of(name.begin(), name.end(), [](char c) {
                const auto byte = static_cast<unsigned char>(c);
                return byte < 0x80 && (std::isalnum(byte) || c == '_' || c == '-' || c == '.');
            });
        if (!identifier) {
            std::string shown;
            for (const char c : name) {
                const auto byte = static_cast<unsigned char>(c);
                if (byte >= 0x20 && byte < 0x7F) {
                    shown += c;
                } else {
                    static constexpr char kHex[] = "0123456789ABCDEF";
                    shown += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 0xF];
                }
            }
            fail_at(at, "the instruction name '" + shown +
                            "' is not an identifier (letters, digits, '_', '-', '.'; for example 'forward')");
        }
    }
    // GPU clocks lie between a few hundred and a few thousand MHz; 5 MHz is a
    // typo or a file in other units, not a schedule to send to every rank.
    void check_frequency(long long mhz, std::size_t at) const {
        if (mhz < kMinFrequencyMhz || mhz > kMaxFrequencyMhz)
            fail_at(at, "a frequency of " + std::to_string(mhz) + " MHz is impossible for a GPU (expected " +
                            std::to_string(kMinFrequencyMhz) + " to " + std::to_string(kMaxFrequencyMhz) +
                            " MHz; frequencies are in MHz)");
    }
    static constexpr long long kMinFrequencyMhz = 100;
    static constexpr long long kMaxFrequencyMhz = 10000;
    void expect(char c) {
        skip();
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    void skip() {
        while (pos_ < text_.size()) {
            if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
                ++pos_;
            } else if (text_[pos_] == '#') {
                while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            } else {
                break;
            }
        }
    }
    [[nodiscard]] char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
    [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
        throw std::invalid_argument(source_ + ": character " + std::to_string(at) + ": " + what +
                                    " (a solution is a list with one list of (instruction, frequency) per rank)");
    }

    const std::string& text_;
    const std::string& source_;
    std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::vector<InstructionFrequency>> parse_solution(const std::string& text, const std::string& source_name) {
    return SolutionReader(text, source_name).read();
}

std::vector<FrequencySchedule> point_solution(const std::vector<std::vector<InstructionFrequency>>& solution,
                                              std::size_t world_size) {
    if (solution.size() != world_size)
        throw std::invalid_argument("the solution assumes " + std::to_string(solution.size()) + " ranks, but the job has " +
                                    std::to_string(world_size));
    std::vector<FrequencySchedule> schedules;
    for (std::size_t rank = 0; rank < solution.size(); ++rank) schedules.push_back({rank, solution[rank]});
    return schedules;
}

std::vector<FrequencySchedule> point_solution_3d(const std::vector<std::vector<InstructionFrequency>>& solution,
                                                 const JobInfo& job, const std::vector<RankInfo>& ranks) {
    const auto stages = point_solution(solution, job.pp_degree);
    std::vector<FrequencySchedule> schedules(job.world_size);
    std::vector<bool> seen(job.world_size, false);
    for (const auto& info : ranks) {
        if (info.rank >= job.world_size || info.pp_rank >= job.pp_degree)
            throw std::invalid_argument("rank " + std::to_string(info.rank) + " (pp_rank " + std::to_string(info.pp_rank) +
                                        ") is outside the job (world size " + std::to_string(job.world_size) +
                                        ", pp degree " + std::to_string(job.pp_degree) + ")");
        schedules[info.rank] = {info.rank, stages[info.pp_rank].frequencies};
        seen[info.rank] = true;
    }
    if (std::find(seen.begin(), seen.end(), false) != seen.end())
        throw std::invalid_argument("not every rank of the job has registered");
    return schedules;
}

namespace {

std::vector<double> zip_with(const std::vector<const std::vector<double>*>& lists, bool take_max) {
    if (lists.empty()) return {};
    std::size_t n = lists.front()->size();
    for (const auto* l : lists) n = std::min(n, l->size());
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        double acc = (*lists.front())[i];
        for (std::size_t k = 1; k < lists.size(); ++k) acc = take_max ? std::max(acc, (*lists[k])[i]) : acc + (*lists[k])[i];
        out[i] = acc;
    }
    return out;
}

std::map<std::string, std::vector<std::vector<double>>> zip_breakdown(
    const std::vector<const std::map<std::string, std::vector<std::vector<double>>>*>& maps, bool take_max) {
    std::map<std::string, std::vector<std::vector<double>>> out;
    if (maps.empty()) return out;
    for (const auto& [key, first] : *maps.front()) {  // the first result's keys, as the original
        std::size_t iterations = first.size();
        for (const auto* m : maps) iterations = std::min(iterations, m->at(key).size());
        auto& agg = out[key];
        for (std::size_t it = 0; it < iterations; ++it) {
            std::vector<const std::vector<double>*> lists;
            for (const auto* m : maps) lists.push_back(&m->at(key)[it]);
            agg.push_back(zip_with(lists, take_max));
        }
    }
    return out;
}

}  // namespace

std::vector<ProfilingResult> aggregate_by_stage(const std::vector<ProfilingResult>& results, const JobInfo& job,
                                                const std::vector<RankInfo>& ranks) {
    std::map<std::size_t, std::size_t> pp_of;
    for (const auto& info : ranks) pp_of[info.rank] = info.pp_rank;
    std::vector<std::vector<const ProfilingResult*>> per_stage(job.pp_degree);
    for (const auto& r : results) {
        const auto it = pp_of.find(r.rank);
        if (it == pp_of.end() || it->second >= job.pp_degree)
            throw std::invalid_argument("a profiling result from rank " + std::to_string(r.rank) + ", which is not registered");
        per_stage[it->second].push_back(&r);
    }
    std::vector<ProfilingResult> out;
    for (std::size_t stage = 0; stage < per_stage.size(); ++stage) {
        const auto& group = per_stage[stage];
        if (group.empty()) throw std::invalid_argument("no profiling result for pipeline stage " + std::to_string(stage));
        std::vector<const std::vector<double>*> times, energies;
        std::vector<const std::map<std::string, std::vector<std::vector<double>>>*> tb, eb;
        for (const auto* r : group) {
            times.push_back(&r->iter_time);
            energies.push_back(&r->iter_energy);
            tb.push_back(&r->time_breakdown);
            eb.push_back(&r->energy_breakdown);
        }
        try {
            out.push_back({stage, zip_with(times, true), zip_with(energies, false), zip_breakdown(tb, true),
                           zip_breakdown(eb, false)});
        } catch (const std::out_of_range&) {
            throw std::invalid_argument("ranks of pipeline stage " + std::to_string(stage) +
                                        " report different instruction names in their breakdowns");
        }
    }
    return out;
}

}  // namespace zeus::perseus
