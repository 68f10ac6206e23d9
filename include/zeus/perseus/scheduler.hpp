// The PFO server's schedulers without the server (zeus/optimizer/
// pipeline_frequency/server/scheduler.py): what each rank runs, loaded from a
// solution file without eval, and the 3-D-parallel view that lets a
// pipeline-only schedule drive data- and tensor-parallel ranks.
#pragma once

#include <cstddef>
#include <ctime>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace zeus::perseus {

using InstructionFrequency = std::pair<std::string, long long>;  // ("forward", 1740)

struct FrequencySchedule {
    std::size_t rank = 0;
    std::vector<InstructionFrequency> frequencies;
    friend bool operator==(const FrequencySchedule&, const FrequencySchedule&) = default;
};

struct JobInfo {
    std::size_t pp_degree = 1, dp_degree = 1, tp_degree = 1, world_size = 1;
    std::string job_metadata;  // empty: none
};

struct RankInfo {
    std::size_t rank = 0, dp_rank = 0, pp_rank = 0, tp_rank = 0;
    std::vector<long long> available_frequencies;
};

struct ProfilingResult {
    std::size_t rank = 0;
    std::vector<double> iter_time, iter_energy;
    // instruction -> per iteration -> per instruction call
    std::map<std::string, std::vector<std::vector<double>>> time_breakdown, energy_breakdown;
};

// "%Y-%m-%d-%H-%M-%S+dp{dp}+pp{pp}+tp{tp}+{scheduler}[+{metadata}]" in local time, as the original.
[[nodiscard]] std::string make_job_id(const JobInfo& job, const std::string& scheduler_name, std::time_t now);

// A solution file: our schedule JSON ([[["forward",1740],...] per entry]) or
// the original's freqs_pipeline_%05d.py (a list literal of (name, freq) tuples
// per entry, then comment lines), parsed as data. Throws
// std::invalid_argument naming the position of the first problem.
[[nodiscard]] std::vector<std::vector<InstructionFrequency>> parse_solution(const std::string& text,
                                                                            const std::string& source_name);

// PointSolution: one schedule per rank, forever. Throws std::invalid_argument
// when the solution has another number of entries than world_size.
[[nodiscard]] std::vector<FrequencySchedule> point_solution(const std::vector<std::vector<InstructionFrequency>>& solution,
                                                            std::size_t world_size);

// PointSolution3D: the solution has one entry per pipeline stage; every rank
// runs its pp_rank's. Throws std::invalid_argument for a rank outside the job
// or a solution without pp_degree entries.
[[nodiscard]] std::vector<FrequencySchedule> point_solution_3d(const std::vector<std::vector<InstructionFrequency>>& solution,
                                                               const JobInfo& job, const std::vector<RankInfo>& ranks);

// make_3d_parallel's observe: one result per stage, elementwise max of
// iter_time/time_breakdown and sum of iter_energy/energy_breakdown over the
// ranks sharing a pp_rank (lists are zipped: the shortest length wins).
[[nodiscard]] std::vector<ProfilingResult> aggregate_by_stage(const std::vector<ProfilingResult>& results,
                                                              const JobInfo& job, const std::vector<RankInfo>& ranks);

}  // namespace zeus::perseus
