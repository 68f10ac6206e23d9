#include "perseus/model_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace zeus::perseus {

using nlohmann::json;

namespace {

using Loc = std::vector<std::string>;

Loc with(Loc loc, const std::string& part) {
    loc.push_back(part);
    return loc;
}

const json& field(const json& body, const Loc& loc) {
    const auto it = body.find(loc.back());
    if (it == body.end()) throw invalid(loc, "field required", "value_error.missing");
    if (it->is_null()) throw invalid(loc, "none is not an allowed value", "type_error.none.not_allowed");
    return *it;
}

long long integer(const json& value, const Loc& loc) {
    if (value.is_number_integer()) return value.get<long long>();
    if (value.is_number_float()) {
        const double number = value.get<double>();
        if (std::isfinite(number) && std::abs(number) < 9.2e18) return static_cast<long long>(number);
    }
    throw invalid(loc, "value is not a valid integer", "type_error.integer");
}

std::size_t count(const json& body, const Loc& loc, long long minimum) {
    const long long value = integer(field(body, loc), loc);
    if (value < minimum)
        throw invalid(loc, "ensure this value is greater than or equal to " + std::to_string(minimum),
                      "value_error.number.not_ge");
    return static_cast<std::size_t>(value);
}

double number(const json& value, const Loc& loc) {
    if (value.is_number()) return value.get<double>();
    throw invalid(loc, "value is not a valid float", "type_error.float");
}

const json& list(const json& value, const Loc& loc) {
    if (!value.is_array()) throw invalid(loc, "value is not a valid list", "type_error.list");
    return value;
}

std::vector<double> numbers(const json& value, const Loc& loc) {
    std::vector<double> out;
    for (std::size_t i = 0; i < list(value, loc).size(); ++i) out.push_back(number(value[i], with(loc, std::to_string(i))));
    return out;
}

std::map<std::string, std::vector<std::vector<double>>> breakdown(const json& body, const Loc& loc) {
    std::map<std::string, std::vector<std::vector<double>>> out;
    const auto it = body.find(loc.back());
    if (it == body.end() || it->is_null()) return out;
    if (!it->is_object()) throw invalid(loc, "value is not a valid dict", "type_error.dict");
    for (const auto& [name, iterations] : it->items()) {
        auto& per_iteration = out[name];
        const Loc at = with(loc, name);
        for (std::size_t i = 0; i < list(iterations, at).size(); ++i)
            per_iteration.push_back(numbers(iterations[i], with(at, std::to_string(i))));
    }
    return out;
}

void require_object(const json& body) {
    if (!body.is_object()) throw invalid({"body"}, "value is not a valid dict", "type_error.dict");
}

}  // namespace

JobInfo job_info_from_json(const json& body) {
    require_object(body);
    if (const auto id = body.find("job_id"); id != body.end() && !id->is_null()) {
        if (!id->is_string()) throw invalid({"body", "job_id"}, "str type expected", "type_error.str");
        if (!id->get<std::string>().empty())
            throw invalid({"body", "job_id"}, "job_id must be empty: the server assigns it", "assertion_error");
    }
    JobInfo job;
    job.pp_degree = count(body, {"body", "pp_degree"}, 1);
    job.dp_degree = count(body, {"body", "dp_degree"}, 1);
    job.tp_degree = count(body, {"body", "tp_degree"}, 1);
    job.world_size = count(body, {"body", "world_size"}, 1);
    // Overflow-safe: a product above world_size is already a mismatch.
    const auto limit = std::numeric_limits<std::size_t>::max();
    const bool fits = job.dp_degree <= limit / job.pp_degree && job.pp_degree * job.dp_degree <= limit / job.tp_degree;
    if (!fits || job.pp_degree * job.dp_degree * job.tp_degree != job.world_size)
        throw invalid({"body", "world_size"},
                      "world_size (" + std::to_string(job.world_size) + ") must equal pp_degree * dp_degree * tp_degree",
                      "assertion_error");
    if (const auto meta = body.find("job_metadata"); meta != body.end() && !meta->is_null()) {
        if (!meta->is_string()) throw invalid({"body", "job_metadata"}, "str type expected", "type_error.str");
        job.job_metadata = meta->get<std::string>();
    }
    return job;
}

RankInfo rank_info_from_json(const json& body) {
    require_object(body);
    RankInfo rank;
    rank.rank = count(body, {"body", "rank"}, 0);
    rank.dp_rank = count(body, {"body", "dp_rank"}, 0);
    rank.pp_rank = count(body, {"body", "pp_rank"}, 0);
    rank.tp_rank = count(body, {"body", "tp_rank"}, 0);
    const Loc loc{"body", "available_frequencies"};
    const json& freqs = list(field(body, loc), loc);
    for (std::size_t i = 0; i < freqs.size(); ++i) rank.available_frequencies.push_back(integer(freqs[i], with(loc, std::to_string(i))));
    return rank;
}

ProfilingResult profiling_result_from_json(const json& body) {
    require_object(body);
    ProfilingResult result;
    result.rank = count(body, {"body", "rank"}, 0);
    result.iter_time = numbers(field(body, {"body", "iter_time"}), {"body", "iter_time"});
    result.iter_energy = numbers(field(body, {"body", "iter_energy"}), {"body", "iter_energy"});
    result.time_breakdown = breakdown(body, {"body", "time_breakdown"});
    result.energy_breakdown = breakdown(body, {"body", "energy_breakdown"});
    return result;
}

FrequencySchedule frequency_schedule_from_json(const json& body) {
    require_object(body);
    FrequencySchedule schedule;
    schedule.rank = count(body, {"rank"}, 0);
    const Loc loc{"frequencies"};
    const json& pairs = list(field(body, loc), loc);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const Loc at = with(loc, std::to_string(i));
        const json& pair = list(pairs[i], at);
        if (pair.size() != 2 || !pair[0].is_string())
            throw invalid(at, "expected [instruction name, frequency]", "type_error.tuple");
        schedule.frequencies.emplace_back(pair[0].get<std::string>(), integer(pair[1], with(at, "1")));
    }
    return schedule;
}

json to_json(const JobInfo& job) {
    return {{"pp_degree", job.pp_degree}, {"dp_degree", job.dp_degree}, {"tp_degree", job.tp_degree},
            {"world_size", job.world_size},
            {"job_metadata", job.job_metadata.empty() ? json(nullptr) : json(job.job_metadata)}};
}

json to_json(const RankInfo& rank) {
    return {{"rank", rank.rank},       {"dp_rank", rank.dp_rank},
            {"pp_rank", rank.pp_rank}, {"tp_rank", rank.tp_rank},
            {"available_frequencies", rank.available_frequencies}};
}

json to_json(const FrequencySchedule& schedule) {
    json pairs = json::array();
    for (const auto& [name, freq] : schedule.frequencies) pairs.push_back(json::array({name, freq}));
    return {{"rank", schedule.rank}, {"frequencies", pairs}};
}

json to_json(const ProfilingResult& result) {
    return {{"rank", result.rank},
            {"iter_time", result.iter_time},
            {"iter_energy", result.iter_energy},
            {"time_breakdown", result.time_breakdown},
            {"energy_breakdown", result.energy_breakdown}};
}

}  // namespace zeus::perseus
