#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

#include "zeus/perseus/scheduler.hpp"

namespace zeus::perseus {
namespace {

TEST(Solution, ReadsTheOriginalsPythonExportWithoutEval) {
    // The shape run_optimization.py writes: one list of tuples per stage, then comments.
    const std::string text =
        "[\n[('forward', 1740), ('forward', 1710), ('backward', 1980)],\n[('forward', 1500), ('backward', 1605)],\n]\n"
        "# Iteration 3 cost change: 0.048455664571514845\n# Iteration 3 total cost: 14.2\n";
    const auto solution = parse_solution(text, "freqs_pipeline_00003.py");
    ASSERT_EQ(solution.size(), 2u);
    EXPECT_EQ(solution[0], (std::vector<InstructionFrequency>{{"forward", 1740}, {"forward", 1710}, {"backward", 1980}}));
    EXPECT_EQ(solution[1], (std::vector<InstructionFrequency>{{"forward", 1500}, {"backward", 1605}}));
}

TEST(Solution, ReadsScheduleJson) {
    const auto solution = parse_solution(R"([[["forward",1740],["backward",1710]],[["forward",1500],["backward",1605]]])", "s.json");
    ASSERT_EQ(solution.size(), 2u);
    EXPECT_EQ(solution[1][1], (InstructionFrequency{"backward", 1605}));
}

TEST(Solution, RefusesCodeAndMalformedText) {
    EXPECT_THROW((void)parse_solution("__import__('os').system('true')", "x.py"), std::invalid_argument);
    EXPECT_THROW((void)parse_solution("[[('forward', 17.5)]]", "x.py"), std::invalid_argument);
    EXPECT_THROW((void)parse_solution("[[('forward', 1740)]", "x.py"), std::invalid_argument);
    EXPECT_THROW((void)parse_solution("[[('forward', 1740)]] extra", "x.py"), std::invalid_argument);
    try {
        (void)parse_solution("[[('forward' 1740)]]", "bad.py");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("bad.py: character"), std::string::npos) << e.what();
    }
}

// What the ranks would be sent must be a schedule they can run: names that
// are identifiers (text, so that they can be sent as JSON) and frequencies a
// GPU has. Such a solution was accepted, then one rank got a 500 and another
// a closed connection.
TEST(Solution, RefusesImpossibleInstructionsAndFrequencies) {
    const auto refused = [](const std::string& text, const std::string& expected) {
        try {
            (void)parse_solution(text, "s.json");
            ADD_FAILURE() << text << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    };
    refused(R"([[["forward",1740],["backward",5]]])", "a frequency of 5 MHz is impossible");
    refused(R"([[["forward",0]]])", "a frequency of 0 MHz is impossible");
    refused(R"([[["forward",174000000]]])", "a frequency of 174000000 MHz is impossible");
    refused(R"([[["forward",99999999999999999999999]]])", "out of range");
    refused("[[[\"forw\xFF" "ard\",1740]]]", "'forw\\xFFard' is not an identifier");
    refused(R"([[["",1740]]])", "'' is not an identifier");
    refused(R"([[["for ward",1740]]])", "'for ward' is not an identifier");
    EXPECT_NO_THROW((void)parse_solution(R"([[["forward",210],["backward_2",10000],["recompute.fw",1410]]])", "s.json"));
}

TEST(PointSolution, OneEntryPerRank) {
    const std::vector<std::vector<InstructionFrequency>> solution{{{"forward", 1}}, {{"forward", 2}}};
    const auto schedules = point_solution(solution, 2);
    EXPECT_EQ(schedules[1], (FrequencySchedule{1, {{"forward", 2}}}));
    EXPECT_THROW((void)point_solution(solution, 3), std::invalid_argument);
}

JobInfo job_2x2x2() { return JobInfo{2, 2, 2, 8, ""}; }

std::vector<RankInfo> ranks_2x2x2() {
    // Megatron-style order: tp fastest, then dp, then pp.
    std::vector<RankInfo> ranks;
    for (std::size_t rank = 0; rank < 8; ++rank) ranks.push_back({rank, (rank / 2) % 2, rank / 4, rank % 2, {1980, 1000}});
    std::reverse(ranks.begin(), ranks.end());  // registration order is arbitrary
    return ranks;
}

TEST(PointSolution3D, EveryRankRunsItsStagesSchedule) {
    const std::vector<std::vector<InstructionFrequency>> stages{{{"forward", 1800}}, {{"forward", 1200}}};
    const auto schedules = point_solution_3d(stages, job_2x2x2(), ranks_2x2x2());
    ASSERT_EQ(schedules.size(), 8u);
    for (std::size_t rank = 0; rank < 8; ++rank) {
        EXPECT_EQ(schedules[rank].rank, rank);
        EXPECT_EQ(schedules[rank].frequencies, stages[rank / 4]);
    }
    auto outside = ranks_2x2x2();
    outside[0].rank = 8;
    EXPECT_THROW((void)point_solution_3d(stages, job_2x2x2(), outside), std::invalid_argument);
    EXPECT_THROW((void)point_solution_3d({stages[0]}, job_2x2x2(), ranks_2x2x2()), std::invalid_argument);
}

TEST(PointSolution3D, AggregatesTimeByMaxAndEnergyBySumPerStage) {
    std::vector<ProfilingResult> results;
    for (std::size_t rank = 0; rank < 8; ++rank) {
        const double r = static_cast<double>(rank);
        results.push_back({rank, {1.0 + r, 2.0 - r}, {10.0 * r, 1.0}, {{"forward", {{r, 5.0 - r}}}}, {{"forward", {{r, 1.0}}}}});
    }
    const auto stages = aggregate_by_stage(results, job_2x2x2(), ranks_2x2x2());
    ASSERT_EQ(stages.size(), 2u);
    for (std::size_t s = 0; s < 2; ++s) {
        std::vector<double> t0, t1, e0, ftb0, ftb1, feb0;
        double e1 = 0.0;
        for (std::size_t rank = 4 * s; rank < 4 * s + 4; ++rank) {
            t0.push_back(results[rank].iter_time[0]);
            t1.push_back(results[rank].iter_time[1]);
            e0.push_back(results[rank].iter_energy[0]);
            e1 += results[rank].iter_energy[1];
            ftb0.push_back(results[rank].time_breakdown.at("forward")[0][0]);
            ftb1.push_back(results[rank].time_breakdown.at("forward")[0][1]);
            feb0.push_back(results[rank].energy_breakdown.at("forward")[0][0]);
        }
        const auto& agg = stages[s];
        EXPECT_EQ(agg.rank, s);
        EXPECT_EQ(agg.iter_time, (std::vector<double>{*std::max_element(t0.begin(), t0.end()), *std::max_element(t1.begin(), t1.end())}));
        double e0sum = 0.0, feb0sum = 0.0;
        for (double v : e0) e0sum += v;
        for (double v : feb0) feb0sum += v;
        EXPECT_EQ(agg.iter_energy, (std::vector<double>{e0sum, e1}));
        EXPECT_EQ(agg.time_breakdown.at("forward")[0],
                  (std::vector<double>{*std::max_element(ftb0.begin(), ftb0.end()), *std::max_element(ftb1.begin(), ftb1.end())}));
        EXPECT_EQ(agg.energy_breakdown.at("forward")[0][0], feb0sum);
    }
    results.push_back({9, {}, {}, {}, {}});
    EXPECT_THROW((void)aggregate_by_stage(results, job_2x2x2(), ranks_2x2x2()), std::invalid_argument);
}

TEST(JobId, OriginalFormat) {
    setenv("TZ", "UTC", 1);
    tzset();
    JobInfo job{4, 2, 1, 8, ""};
    const std::time_t t = 1764037230;  // 2025-11-25 02:20:30 UTC
    EXPECT_EQ(make_job_id(job, "PointSolution", t), "2025-11-25-02-20-30+dp2+pp4+tp1+PointSolution");
    job.job_metadata = "gpt3";
    EXPECT_EQ(make_job_id(job, "PointSolution3D", t), "2025-11-25-02-20-30+dp2+pp4+tp1+PointSolution3D+gpt3");
}

}  // namespace
}  // namespace zeus::perseus
