// The PFO server's routes and job state, driven without sockets: the
// schedule barrier, result rounds, the 3-D scheduler, dumps, idle eviction,
// and bad input answered with a clear error while other jobs go on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perseus/router.hpp"

namespace zeus::perseus {
namespace {

namespace http = http_server::http;
using nlohmann::json;

// What one request got, if it got anything yet.
struct Answer {
    std::shared_ptr<std::optional<http_server::Response>> slot = std::make_shared<std::optional<http_server::Response>>();
    [[nodiscard]] bool answered() const { return slot->has_value(); }
    [[nodiscard]] int status() const { return static_cast<int>((*slot)->status); }
    [[nodiscard]] json body() const { return json::parse((*slot)->body); }
};

class PfoServerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("zeus-pfo-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // A solution file with `entries` schedules: entry i runs forward at 1000+i, backward at 900+i.
    std::filesystem::path solution(std::size_t entries) {
        json list = json::array();
        for (std::size_t i = 0; i < entries; ++i)
            list.push_back(json::array({json::array({"forward", 1000 + i}), json::array({"backward", 900 + i})}));
        const auto path = dir_ / ("solution-" + std::to_string(entries) + ".json");
        std::ofstream(path) << list.dump();
        return path;
    }

    void start(const std::string& scheduler, std::size_t entries) {
        settings_.scheduler = scheduler;
        settings_.solution_path = solution(entries);
        settings_.dump_dir = dir_ / "dump";
        settings_.max_job_idle_time = std::chrono::seconds(100);
        check_settings(settings_);
        jobs_.emplace(settings_);
        router_.emplace(*jobs_);
    }

    Answer send(http::verb method, const std::string& target, const std::string& body = "") {
        http_server::Request request{method, target, 11};
        request.body() = body;
        Answer answer;
        router_->handle(request, [slot = answer.slot](http_server::Response response) {
            ASSERT_FALSE(slot->has_value()) << "answered twice";
            *slot = std::move(response);
        });
        return answer;
    }

    std::string register_job(std::size_t pp, std::size_t dp, std::size_t tp, const std::string& metadata = "") {
        json body{{"job_id", ""}, {"pp_degree", pp}, {"dp_degree", dp}, {"tp_degree", tp}, {"world_size", pp * dp * tp}};
        if (!metadata.empty()) body["job_metadata"] = metadata;
        const auto answer = send(http::verb::post, "/register_job", body.dump());
        EXPECT_EQ(answer.status(), 200) << (*answer.slot)->body;
        return answer.body().get<std::string>();
    }

    Answer register_rank(const std::string& job, std::size_t rank, std::size_t pp_rank, std::size_t dp_rank = 0) {
        json body{{"rank", rank}, {"dp_rank", dp_rank}, {"pp_rank", pp_rank}, {"tp_rank", 0},
                  {"available_frequencies", {1500, 1000}}};
        return send(http::verb::post, "/register_rank/" + job, body.dump());
    }

    Answer schedule(const std::string& job, std::size_t rank) {
        return send(http::verb::get, "/schedule/" + job + "?rank=" + std::to_string(rank));
    }

    Answer result(const std::string& job, std::size_t rank, double time, double energy) {
        json body{{"rank", rank}, {"iter_time", {time}}, {"iter_energy", {energy}},
                  {"time_breakdown", {{"forward", {{time / 2}}}}}, {"energy_breakdown", {{"forward", {{energy / 2}}}}}};
        return send(http::verb::post, "/result/" + job, body.dump());
    }

    static json expected_schedule(std::size_t rank, std::size_t entry) {
        return {{"rank", rank},
                {"frequencies", json::array({json::array({"forward", 1000 + entry}), json::array({"backward", 900 + entry})})}};
    }

    std::filesystem::path dir_;
    PfoSettings settings_;
    std::optional<JobManager> jobs_;
    std::optional<Router> router_;
};

TEST_F(PfoServerTest, JobIdHasTheOriginalsFormat) {
    start("PointSolution", 2);
    const auto id = register_job(2, 1, 1, "llama");
    // %Y-%m-%d-%H-%M-%S+dp1+pp2+tp1+PointSolution+llama
    ASSERT_EQ(id.size(), 19 + std::string("+dp1+pp2+tp1+PointSolution+llama").size()) << id;
    EXPECT_EQ(id.substr(19), "+dp1+pp2+tp1+PointSolution+llama");
    EXPECT_EQ(id[4], '-');
    EXPECT_EQ(id[10], '-');
    // Another job in the same second keeps its own state.
    EXPECT_NE(register_job(2, 1, 1, "llama"), id);
}

TEST_F(PfoServerTest, ScheduleWaitsUntilEveryRankHasAsked) {
    start("PointSolution", 2);
    const auto job = register_job(2, 1, 1);
    EXPECT_EQ(register_rank(job, 1, 1).status(), 200);
    const auto early = schedule(job, 1);  // before rank 0 has registered
    EXPECT_FALSE(early.answered());
    EXPECT_EQ(register_rank(job, 0, 0).status(), 200);
    EXPECT_FALSE(early.answered());  // rank 0 has not asked yet
    const auto last = schedule(job, 0);
    ASSERT_TRUE(early.answered());
    ASSERT_TRUE(last.answered());
    EXPECT_EQ(early.body(), expected_schedule(1, 1));
    EXPECT_EQ(last.body(), expected_schedule(0, 0));

    // The next round begins when every rank has reported its result.
    const auto again = schedule(job, 0);
    EXPECT_FALSE(again.answered());
    EXPECT_EQ(result(job, 0, 1.0, 100.0).status(), 200);
    EXPECT_EQ(result(job, 1, 1.5, 120.0).status(), 200);
    EXPECT_FALSE(again.answered());  // rank 1 has not asked for round 1
    const auto other = schedule(job, 1);
    ASSERT_TRUE(again.answered());
    EXPECT_EQ(again.body(), expected_schedule(0, 0));  // PointSolution repeats its schedule
    EXPECT_EQ(other.body(), expected_schedule(1, 1));

    // Dumped as the original: ranks, then round 0's results and schedules.
    const auto dump = dir_ / "dump" / job;
    const auto ranks = json::parse(std::ifstream(dump / "ranks.json"));
    ASSERT_EQ(ranks.size(), 2U);
    EXPECT_EQ(ranks[0]["rank"], 0);
    EXPECT_EQ(ranks[1]["available_frequencies"], json({1500, 1000}));
    const auto prof = json::parse(std::ifstream(dump / "0.prof.json"));
    EXPECT_EQ(prof[1]["iter_energy"], json({120.0}));
    EXPECT_EQ(json::parse(std::ifstream(dump / "0.sched.json"))[1], expected_schedule(1, 1));
}

TEST_F(PfoServerTest, ThreeDimensionalJobsRunTheirStagesSchedule) {
    start("PointSolution3D", 2);  // one entry per pipeline stage
    const auto job = register_job(2, 2, 1);
    // rank = pp_rank * 2 + dp_rank
    for (std::size_t rank = 0; rank < 4; ++rank) ASSERT_EQ(register_rank(job, rank, rank / 2, rank % 2).status(), 200);
    std::vector<Answer> answers;
    for (std::size_t rank = 0; rank < 4; ++rank) answers.push_back(schedule(job, rank));
    for (std::size_t rank = 0; rank < 4; ++rank) {
        ASSERT_TRUE(answers[rank].answered());
        EXPECT_EQ(answers[rank].body(), expected_schedule(rank, rank / 2));
    }
}

TEST_F(PfoServerTest, BadInputGetsAClearErrorAndOtherJobsGoOn) {
    start("PointSolution", 2);
    const auto good = register_job(2, 1, 1);
    EXPECT_EQ(register_rank(good, 0, 0).status(), 200);
    const auto waiting = schedule(good, 0);

    // Unknown job id.
    const auto unknown = schedule("1999-01-01-00-00-00+dp1+pp2+tp1+PointSolution", 0);
    EXPECT_EQ(unknown.status(), 404);
    EXPECT_NE(unknown.body()["detail"].get<std::string>().find("unknown job id"), std::string::npos);
    EXPECT_EQ(register_rank("nope", 0, 0).status(), 404);
    EXPECT_EQ(result("nope", 0, 1, 1).status(), 404);

    // Ranks outside the world size, or twice.
    const auto outside = register_rank(good, 2, 1);
    EXPECT_EQ(outside.status(), 400);
    EXPECT_NE(outside.body()["detail"].get<std::string>().find("world_size is 2"), std::string::npos);
    EXPECT_EQ(register_rank(good, 1, 5).status(), 400);  // pp_rank outside pp_degree
    EXPECT_EQ(register_rank(good, 0, 0).status(), 400);  // again
    EXPECT_EQ(schedule(good, 7).status(), 400);
    EXPECT_EQ(result(good, 9, 1, 1).status(), 400);

    // Bodies that do not fit the models: FastAPI's 422.
    const auto mismatch = send(http::verb::post, "/register_job",
                               R"({"pp_degree":2,"dp_degree":2,"tp_degree":1,"world_size":3})");
    EXPECT_EQ(mismatch.status(), 422);
    EXPECT_EQ(mismatch.body()["detail"][0]["loc"], json({"body", "world_size"}));
    EXPECT_EQ(send(http::verb::post, "/register_job", R"({"job_id":"mine","pp_degree":1,"dp_degree":1,"tp_degree":1,"world_size":1})").status(), 422);
    EXPECT_EQ(send(http::verb::post, "/register_job", "{not json").status(), 422);
    EXPECT_EQ(send(http::verb::get, "/schedule/" + good).status(), 422);  // no rank
    EXPECT_EQ(send(http::verb::get, "/schedule/" + good + "?rank=-1").status(), 422);
    EXPECT_EQ(send(http::verb::get, "/register_job").status(), 405);
    EXPECT_EQ(send(http::verb::get, "/info").status(), 404);  // the original defines no route either

    // A job whose world does not fit the solution (its schedule would have the
    // wrong number of entries): every rank's request fails with the reason.
    const auto wrong = register_job(3, 1, 1);
    for (std::size_t rank = 0; rank < 3; ++rank) ASSERT_EQ(register_rank(wrong, rank, rank).status(), 200);
    const auto failed = schedule(wrong, 0);
    ASSERT_TRUE(failed.answered());
    EXPECT_EQ(failed.status(), 500);
    EXPECT_NE(failed.body()["detail"].get<std::string>().find("the solution assumes 2 ranks, but the job has 3"),
              std::string::npos)
        << failed.body();
    EXPECT_EQ(schedule(wrong, 1).status(), 500);

    // The good job was never disturbed.
    EXPECT_FALSE(waiting.answered());
    EXPECT_EQ(register_rank(good, 1, 1).status(), 200);
    const auto second = schedule(good, 1);
    ASSERT_TRUE(waiting.answered());
    EXPECT_EQ(waiting.body(), expected_schedule(0, 0));
    EXPECT_EQ(second.body(), expected_schedule(1, 1));
}

TEST_F(PfoServerTest, IdleJobsAreForgottenAndTheirWaitersTold) {
    start("PointSolution", 2);
    const auto job = register_job(2, 1, 1);
    ASSERT_EQ(register_rank(job, 0, 0).status(), 200);
    const auto waiting = schedule(job, 0);
    const auto now = JobManager::Clock::now();
    EXPECT_EQ(jobs_->evict_idle(now + std::chrono::seconds(50)), 0U);
    EXPECT_EQ(jobs_->evict_idle(now + std::chrono::seconds(101)), 1U);
    ASSERT_TRUE(waiting.answered());
    EXPECT_EQ(waiting.status(), 410);
    EXPECT_EQ(jobs_->job_count(), 0U);
    EXPECT_EQ(register_rank(job, 1, 1).status(), 404);
}

TEST_F(PfoServerTest, ThreeDimensionalResultsThatCannotBeAggregatedEndTheJob) {
    start("PointSolution3D", 1);
    const auto job = register_job(1, 2, 1);
    ASSERT_EQ(register_rank(job, 0, 0, 0).status(), 200);
    ASSERT_EQ(register_rank(job, 1, 0, 1).status(), 200);
    (void)schedule(job, 0);
    ASSERT_TRUE(schedule(job, 1).answered());
    EXPECT_EQ(result(job, 0, 1, 1).status(), 200);
    EXPECT_EQ(result(job, 0, 1, 1).status(), 400);  // twice in one round
    // Rank 1 reports other instructions than rank 0: they cannot be aggregated.
    const json odd{{"rank", 1}, {"iter_time", {1.0}}, {"iter_energy", {1.0}}, {"time_breakdown", {{"backward", {{1.0}}}}}};
    EXPECT_EQ(send(http::verb::post, "/result/" + job, odd.dump()).status(), 200);
    const auto next = schedule(job, 0);
    ASSERT_TRUE(next.answered());
    EXPECT_EQ(next.status(), 500);
    EXPECT_NE(next.body()["detail"].get<std::string>().find("could not observe"), std::string::npos) << next.body();
}

// job_metadata becomes part of the job id, and the id a directory under
// dump_dir: whatever a client puts there, every dump stays inside dump_dir
// ("/../../escaped" wrote escaped/ranks.json two levels up).
TEST_F(PfoServerTest, DumpsStayInsideTheDumpDirectoryWhateverTheJobMetadata) {
    start("PointSolution", 1);
    // dump_dir two levels down, so that "../.." lands inside the test's directory where we can look.
    settings_.dump_dir = dir_ / "a" / "b" / "dump";
    jobs_.emplace(settings_);
    router_.emplace(*jobs_);
    const auto percent_encoded = [](const std::string& id) {
        std::string out;
        for (const char c : id) {
            const auto byte = static_cast<unsigned char>(c);
            if (std::isalnum(byte) || c == '-' || c == '+' || c == '.' || c == '_') out += c;
            else out += fmt::format("%{:02X}", byte);
        }
        return out;
    };
    for (const std::string& metadata : {std::string("/../../escaped"), std::string("x/../../../escaped2"),
                                       std::string("/..") + std::string(1, '\0') + "/nul", std::string("..")}) {
        const auto job = register_job(1, 1, 1, metadata);
        ASSERT_EQ(register_rank(percent_encoded(job), 0, 0).status(), 200) << job;
    }
    std::size_t inside = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
        if (entry.path().filename() != "ranks.json") continue;
        const auto relative = entry.path().lexically_relative(settings_.dump_dir);
        EXPECT_FALSE(relative.empty() || *relative.begin() == "..") << entry.path() << " is outside the dump directory";
        // Exactly one directory per job right under dump_dir.
        EXPECT_EQ(std::distance(relative.begin(), relative.end()), 2) << relative;
        ++inside;
    }
    EXPECT_EQ(inside, 4U);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "a" / "escaped"));
    EXPECT_FALSE(std::filesystem::exists(dir_ / "escaped2"));
}

// Two servers sharing a dump directory (here two managers, whose only
// shared state is the directory, as two processes'), each given a job with
// the same degrees in the same second: the ids differ and neither job's
// dumps overwrite the other's.
TEST_F(PfoServerTest, TwoServersSharingADumpDirectoryGiveSameSecondJobsTheirOwnIds) {
    start("PointSolution", 1);
    JobManager other(settings_);
    JobInfo info;
    info.pp_degree = 1;
    info.dp_degree = 1;
    info.tp_degree = 1;
    info.world_size = 1;
    const std::time_t now = 1'700'000'000;
    const auto first = jobs_->register_job(info, now);
    const auto second = other.register_job(info, now);
    const auto third = other.register_job(info, now);
    EXPECT_NE(first, second);
    EXPECT_NE(second, third);
    EXPECT_NE(first, third);
    EXPECT_EQ(second, first + "+2");
    for (const auto& [manager, id] : {std::pair<JobManager*, std::string>{&*jobs_, first}, {&other, second}}) {
        RankInfo rank;
        rank.available_frequencies = {1500, 1000};
        manager->register_rank(id, rank);
        EXPECT_TRUE(std::filesystem::exists(settings_.dump_dir / id / "ranks.json")) << id;
    }
    // Three jobs, three directories.
    std::size_t directories = 0;
    for (const auto& entry : std::filesystem::directory_iterator(settings_.dump_dir)) {
        (void)entry;
        ++directories;
    }
    EXPECT_EQ(directories, 3U);
}

// A symbolic link planted in the dump directory does not lead a dump out of it.
TEST_F(PfoServerTest, ADumpThroughASymbolicLinkOutOfTheDumpDirectoryIsRefused) {
    std::vector<std::string> warnings;
    start("PointSolution", 1);
    jobs_.emplace(settings_, [&warnings](const std::string& warning) { warnings.push_back(warning); });
    router_.emplace(*jobs_);
    const auto job = register_job(1, 1, 1, "linked");
    // In place of the directory the registration made.
    std::filesystem::remove(settings_.dump_dir / job);
    std::filesystem::create_directories(dir_ / "elsewhere");
    std::filesystem::create_directory_symlink(dir_ / "elsewhere", settings_.dump_dir / job);
    ASSERT_EQ(register_rank(job, 0, 0).status(), 200);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "elsewhere" / "ranks.json"));
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("outside the dump directory"), std::string::npos) << warnings[0];
}

// Ids that are not percent-encoded UTF-8, in the path or the query, and
// bodies nested too deeply: 422s that serialise, never a 500.
TEST_F(PfoServerTest, UndecodableIdsAndDeepBodiesAre422s) {
    start("PointSolution", 2);
    const auto job = register_job(2, 1, 1);
    for (const auto& [method, target] : std::vector<std::pair<http::verb, std::string>>{
             {http::verb::get, "/schedule/%FF?rank=0"},
             {http::verb::post, "/register_rank/%FF"},
             {http::verb::post, "/result/%C3%28"},
             {http::verb::get, "/schedule/" + job + "?rank=%FF"}}) {
        const auto answer = send(method, target, "{}");
        ASSERT_TRUE(answer.answered()) << target;
        EXPECT_EQ(answer.status(), 422) << target << ": " << (*answer.slot)->body;
    }
    const auto deep = send(http::verb::post, "/register_job", std::string(1 << 20, '['));
    EXPECT_EQ(deep.status(), 422);
    EXPECT_NE(deep.body()["detail"][0]["msg"].get<std::string>().find("deeper than"), std::string::npos);
}

// A solution no rank could run is a startup error, before any job registers.
TEST_F(PfoServerTest, AnImpossibleSolutionIsRefusedAtStartup) {
    settings_.solution_path = dir_ / "slow.json";
    std::ofstream(settings_.solution_path) << R"([[["forward",5],["backward",900]]])";
    try {
        check_settings(settings_);
        FAIL() << "a 5 MHz schedule was accepted";
    } catch (const PfoError& e) {
        EXPECT_NE(std::string(e.what()).find("slow.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("5 MHz is impossible"), std::string::npos) << e.what();
    }
}

TEST(PfoSettings, RefusesUnknownSchedulersAndMissingSolutions) {
    PfoSettings settings;
    settings.scheduler = "Annealing";
    EXPECT_THROW(check_settings(settings), PfoError);
    settings.scheduler = "PointSolution";
    settings.solution_path = "/nonexistent/freqs.json";
    EXPECT_THROW(check_settings(settings), PfoError);
}

}  // namespace
}  // namespace zeus::perseus
