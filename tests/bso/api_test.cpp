// The REST API over both database backends (SQLite file, private PostgreSQL
// server): status codes, JSON fields, job ids, trial numbering, the
// original's pruning scenario end to end, restarts and schema versions
// (PostgreSQL outages under load: postgres_outage_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "bso/router.hpp"
#include "postgres_cluster.hpp"

namespace zeus::bso {
namespace {

namespace http = http_server::http;
using nlohmann::json;

using testing::cluster;

struct Reply {
    int status;
    json body;
};

class BsoApi : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        static std::atomic<int> counter{0};
        const std::string name = "bso_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
        if (GetParam() == "postgresql") {
            if (cluster().uri().empty()) GTEST_SKIP() << "no PostgreSQL server: " << cluster().error();
            location_ = cluster().new_database(name);
        } else {
            dir_ = std::filesystem::temp_directory_path() / name;
            std::filesystem::create_directories(dir_);
            location_ = (dir_ / "bso.db").string();
        }
        open();
    }
    void TearDown() override {
        router_.reset();
        service_.reset();
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }
    void open() {
        router_.reset();
        service_.reset();
        service_ = std::make_unique<Service>(Database::open(location_), [this] { return clock_ += 1.25; });
        router_ = std::make_unique<Router>(*service_);
    }
    Reply call(http::verb method, const std::string& target, const std::string& body = "") {
        http_server::Request request{method, target, 11};
        request.body() = body;
        const auto response = router_->handle(request);
        return {static_cast<int>(response.status), json::parse(response.body)};
    }
    Reply call(http::verb method, const std::string& target, const json& body) { return call(method, target, body.dump()); }

    json spec(const std::string& job_id, std::int64_t default_bs = 128) {
        return json{{"job_id", job_id},
                    {"job_id_prefix", "mnist"},
                    {"batch_sizes", {256, 8, 16, 32, 64, 128}},  // the server sorts them
                    {"default_batch_size", default_bs},
                    {"beta_knob", nullptr},
                    {"max_power", kMaxPower},
                    {"number_of_gpus", 1},
                    {"gpu_model", "A100"}};
    }
    json predict(const std::string& job_id) {
        auto r = call(http::verb::get, "/jobs/batch_size?job_id=" + job_id);
        EXPECT_EQ(r.status, 200) << r.body.dump();
        return r.body;
    }
    // Reports a finished run whose zeus cost (eta 0.5) is `cost`.
    Reply finish(const json& trial, double cost, bool converged, std::int64_t epoch = 100) {
        json report = trial;
        report["energy"] = 1.0;
        report["time"] = (2 * cost - 1.0) / kMaxPower;
        report["metric"] = converged ? 0.55 : 0.4;
        report["current_epoch"] = epoch;
        return call(http::verb::post, "/report", report);
    }

    static constexpr double kMaxPower = 3000.0;
    std::filesystem::path dir_;
    std::string location_;
    double clock_ = 1'700'000'000.0;
    std::unique_ptr<Service> service_;
    std::unique_ptr<Router> router_;
};

TEST_P(BsoApi, RegisterCreatesThenAcceptsTheSameSpecAndRejectsAnother) {
    auto created = call(http::verb::post, "/jobs", spec("mnist-1"));
    ASSERT_EQ(created.status, 201) << created.body.dump();
    EXPECT_EQ(created.body["job_id"], "mnist-1");
    EXPECT_EQ(created.body["batch_sizes"], json({8, 16, 32, 64, 128, 256}));
    EXPECT_EQ(created.body["eta_knob"], 0.5);        // defaults filled in
    EXPECT_EQ(created.body["beta_knob"], nullptr);
    EXPECT_EQ(created.body["max_epochs"], 100);
    EXPECT_EQ(created.body["mab_num_explorations"], 2);
    EXPECT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 200);
    auto other = spec("mnist-1");
    other["eta_knob"] = 0.7;
    auto conflict = call(http::verb::post, "/jobs", other);
    EXPECT_EQ(conflict.status, 409);
    EXPECT_NE(conflict.body["message"].get<std::string>().find("doesn't match"), std::string::npos);
}

TEST_P(BsoApi, GeneratedJobIdsFollowThePrefixRule) {
    auto job = spec("x");
    job.erase("job_id");
    auto a = call(http::verb::post, "/jobs", job);
    auto b = call(http::verb::post, "/jobs", job);
    ASSERT_EQ(a.status, 201);
    ASSERT_EQ(b.status, 201);
    const std::regex shape("mnist-[0-9a-f]{8}");
    EXPECT_TRUE(std::regex_match(a.body["job_id"].get<std::string>(), shape)) << a.body["job_id"];
    EXPECT_NE(a.body["job_id"], b.body["job_id"]);
    auto wrong_prefix = spec("cifar-1");
    EXPECT_EQ(call(http::verb::post, "/jobs", wrong_prefix).status, 422);
}

TEST_P(BsoApi, ValidationFailuresAre422) {
    EXPECT_EQ(call(http::verb::post, "/jobs", std::string("{not json")).status, 422);
    EXPECT_EQ(call(http::verb::post, "/jobs", std::string("[1]")).status, 422);
    auto missing = spec("mnist-1");
    missing.erase("gpu_model");
    auto r = call(http::verb::post, "/jobs", missing);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(r.body["detail"][0]["loc"], json({"body", "gpu_model"}));
    for (auto [field, value] : std::vector<std::pair<std::string, json>>{{"default_batch_size", 100},
                                                                         {"eta_knob", 1.5},
                                                                         {"beta_knob", 0},
                                                                         {"max_epochs", 0},
                                                                         {"batch_sizes", json::array()},
                                                                         {"max_power", -1},
                                                                         {"gpu_model", ""}}) {
        auto bad = spec("mnist-1");
        bad[field] = value;
        EXPECT_EQ(call(http::verb::post, "/jobs", bad).status, 422) << field;
    }
    EXPECT_EQ(call(http::verb::get, "/jobs/batch_size").status, 422);  // job_id missing
    EXPECT_EQ(call(http::verb::post, "/report", json{{"job_id", "x"}}).status, 422);
    EXPECT_EQ(call(http::verb::get, "/nowhere").status, 404);
    EXPECT_EQ(call(http::verb::put, "/report").status, 405);
}

TEST_P(BsoApi, UnknownJobsAndTrials) {
    auto r = call(http::verb::get, "/jobs/batch_size?job_id=nope");
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body["message"].get<std::string>().find("nope"), std::string::npos);
    EXPECT_EQ(finish(json{{"job_id", "nope"}, {"batch_size", 8}, {"trial_number", 1}}, 1, true).status, 400);
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 201);
    EXPECT_EQ(finish(json{{"job_id", "mnist-1"}, {"batch_size", 8}, {"trial_number", 7}}, 1, true).status, 400);
    EXPECT_EQ(call(http::verb::patch, "/trials", json{{"job_id", "mnist-1"}, {"batch_size", 8}, {"trial_number", 7}}).status, 404);
    EXPECT_EQ(call(http::verb::delete_, "/jobs?job_id=nope").status, 404);
    EXPECT_EQ(call(http::verb::delete_, "/jobs?job_id=mnist-1").status, 200);
    EXPECT_EQ(call(http::verb::get, "/jobs/batch_size?job_id=mnist-1").status, 400);
}

TEST_P(BsoApi, TheOriginalsPruningScenarioEndToEnd) {
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 201);
    const std::vector<std::tuple<int, double, bool>> steps{{128, 10.0, true}, {64, 9.0, true},  {32, 8.0, true},
                                                           {16, 12.0, true},  {8, 21.0, false}, {256, 15.0, true},
                                                           {32, 8.0, true},   {16, 12.0, false}, {64, 9.0, true},
                                                           {128, 10.0, true}, {256, 17.0, false}};
    std::int64_t expected_number = 0;
    for (const auto& [bs, cost, converged] : steps) {
        auto trial = predict("mnist-1");
        EXPECT_EQ(trial["batch_size"], bs);
        EXPECT_EQ(trial["trial_number"], ++expected_number);
        // A report that does not stop leaves the trial open.
        json progress = trial;
        progress.update(json{{"energy", 0.1}, {"time", 0.0}, {"metric", 0.1}, {"current_epoch", 1}});
        auto keep = call(http::verb::post, "/report", progress);
        EXPECT_EQ(keep.body, json({{"stop_train", false}, {"converged", false}, {"message", "Stop condition not met, keep training"}}));
        auto done = finish(trial, cost, converged);
        ASSERT_EQ(done.status, 200);
        EXPECT_TRUE(done.body["stop_train"]);
        EXPECT_EQ(done.body["converged"], converged);
        // Reported again: the stored answer.
        auto again = finish(trial, cost, !converged);
        EXPECT_EQ(again.body["converged"], converged);
        EXPECT_NE(again.body["message"].get<std::string>().find("already reported"), std::string::npos);
    }
    // The MAB stage: every arm has 2 observations, so Thompson sampling picks one of the arms.
    for (int i = 0; i < 5; ++i) {
        auto trial = predict("mnist-1");
        EXPECT_EQ(trial["trial_number"], ++expected_number);
        const auto bs = trial["batch_size"].get<int>();
        EXPECT_TRUE(bs == 32 || bs == 64 || bs == 128) << bs;
        ASSERT_EQ(finish(trial, bs == 32 ? 8.0 : 9.5, true).status, 200);
    }
}

TEST_P(BsoApi, AnAbandonedTrialFailsAndItsBatchSizeIsExploredAgain) {
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 201);
    auto first = predict("mnist-1");
    // While it runs, another recurrence gets a Concurrent trial at the default.
    auto concurrent = predict("mnist-1");
    EXPECT_EQ(concurrent["batch_size"], 128);
    EXPECT_EQ(concurrent["trial_number"], 2);
    auto end = call(http::verb::patch, "/trials", first);
    EXPECT_EQ(end.status, 200);
    EXPECT_EQ(end.body, nullptr);
    // A Failed trial has no stored result: reporting it is a 400.
    EXPECT_EQ(finish(first, 10, true).status, 400);
    auto retry = predict("mnist-1");
    EXPECT_EQ(retry["batch_size"], 128);
    EXPECT_EQ(retry["trial_number"], 3);
}

TEST_P(BsoApi, EarlyStopAgainstTheCheapestRun) {
    auto job = spec("mnist-1");
    job["beta_knob"] = 2.0;
    ASSERT_EQ(call(http::verb::post, "/jobs", job).status, 201);
    auto first = predict("mnist-1");
    ASSERT_TRUE(finish(first, 10.0, true).body["converged"]);
    auto second = predict("mnist-1");
    // Cost 25 > 2 * 10 before reaching the target: stopped, not converged.
    auto stopped = finish(second, 25.0, false, 3);
    EXPECT_TRUE(stopped.body["stop_train"]);
    EXPECT_FALSE(stopped.body["converged"]);
    EXPECT_NE(stopped.body["message"].get<std::string>().find("exceeded the cost upper bound"), std::string::npos);
}

TEST_P(BsoApi, StateSurvivesARestartAndSeededJobsReplay) {
    for (const char* id : {"mnist-a", "mnist-b"}) {
        auto job = spec(id, 64);
        job["mab_seed"] = 42;
        job["num_pruning_rounds"] = 1;
        ASSERT_EQ(call(http::verb::post, "/jobs", job).status, 201);
    }
    std::vector<std::int64_t> chosen[2];
    int which = 0;
    for (const char* id : {"mnist-a", "mnist-b"}) {
        // One round: 64, 32, 16, 8 down, 128, 256 up; all converge with distinct costs.
        for (double cost : {10.0, 9.0, 11.0, 12.0, 10.5, 13.0}) ASSERT_EQ(finish(predict(id), cost, true).status, 200);
        for (int i = 0; i < 6; ++i) {
            if (i == 3) open();  // restart mid-job
            auto trial = predict(id);
            chosen[which].push_back(trial["batch_size"].get<std::int64_t>());
            ASSERT_EQ(finish(trial, 9.0 + i * 0.1, true).status, 200);
        }
        ++which;
    }
    // Same seed, same history: the same choices, across a restart.
    EXPECT_EQ(chosen[0], chosen[1]);
    auto next = predict("mnist-a");
    EXPECT_EQ(next["trial_number"], 13);
}

TEST_P(BsoApi, SchemaIsVersionedAndANewerOneIsRefused) {
    EXPECT_EQ(Database::open(location_)->schema_version(), Database::latest_schema_version());
    if (GetParam() != "sqlite") return;
    // From the previous version: a database left at version latest-1 is upgraded.
    const auto older = (dir_ / "older.db").string();
    EXPECT_EQ(Database::open(older, Database::latest_schema_version() - 1)->schema_version(),
              Database::latest_schema_version() - 1);
    EXPECT_EQ(Database::open(older)->schema_version(), Database::latest_schema_version());
    // A newer server's database.
    ASSERT_EQ(std::system(("sqlite3 '" + older + "' 'INSERT INTO bso_schema_version VALUES (999)'").c_str()), 0);
    try {
        (void)Database::open(older);
        FAIL() << "a newer schema was accepted";
    } catch (const BsoError& e) {
        EXPECT_NE(std::string(e.what()).find("999"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    }
    try {
        (void)Database::open((dir_ / "no/such/dir/bso.db").string());
        FAIL() << "an unopenable database was accepted";
    } catch (const BsoError& e) {
        EXPECT_NE(std::string(e.what()).find("no/such/dir"), std::string::npos) << e.what();
    }
}

TEST_P(BsoApi, ConcurrentRequestsOfOneJobGetDistinctTrialNumbers) {
    // PostgreSQL: a pool of connections, so only the per-job lock keeps
    // trial numbering (max + 1) from racing; SQLite: its one connection.
    std::vector<std::unique_ptr<Database>> pool;
    for (int i = 0; i < (GetParam() == "postgresql" ? 4 : 1); ++i) pool.push_back(Database::open(location_));
    router_.reset();
    service_ = std::make_unique<Service>(std::move(pool), [this] { return clock_ += 1.25; });
    router_ = std::make_unique<Router>(*service_);
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 201);
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-2")).status, 201);
    constexpr int kThreads = 8, kEach = 5;
    std::vector<std::vector<std::int64_t>> numbers(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                http_server::Request request{http::verb::get, std::string("/jobs/batch_size?job_id=mnist-") + (t % 2 ? "1" : "2"), 11};
                const auto body = json::parse(router_->handle(request).body);
                numbers[static_cast<std::size_t>(t)].push_back(body.value("trial_number", std::int64_t{-1}));
            }
        });
    }
    for (auto& thread : threads) thread.join();
    for (int job = 0; job < 2; ++job) {
        std::set<std::int64_t> seen;
        for (int t = 0; t < kThreads; ++t)
            if (t % 2 == job) seen.insert(numbers[static_cast<std::size_t>(t)].begin(), numbers[static_cast<std::size_t>(t)].end());
        std::set<std::int64_t> expected;
        for (int n = 1; n <= kThreads / 2 * kEach; ++n) expected.insert(n);
        EXPECT_EQ(seen, expected) << "job " << job;
    }
}

TEST_P(BsoApi, AConnectionSeesAnothersCommitsBetweenItsPreparedQueries) {
    // Each connection keeps its statements prepared. One that stopped reading
    // a query's rows early would hold SQLite's read snapshot open, and this
    // connection would not see what another committed since.
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-seen")).status, 201);
    auto reader = Database::open(location_);
    auto writer = Database::open(location_);
    ASSERT_TRUE(reader->find_job("mnist-seen"));  // a row read, the statement kept
    EXPECT_TRUE(reader->trials("mnist-seen").empty());
    const auto context = reader->find_job_and_trial("mnist-seen", 64, 1);
    ASSERT_TRUE(context);
    EXPECT_FALSE(context->second) << "no trial was created yet";
    EXPECT_FALSE(reader->find_job_and_trial("mnist-unknown", 64, 1));

    Trial trial;
    trial.trial_number = writer->next_trial_number("mnist-seen");
    trial.batch_size = 64;
    writer->insert_trial("mnist-seen", trial);
    trial.status = TrialStatus::Succeeded;
    trial.time = 12.5;
    trial.energy = 3000.0;
    trial.converged = true;
    writer->update_trial("mnist-seen", trial);

    const auto seen = reader->trials("mnist-seen");
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0].status, TrialStatus::Succeeded);
    EXPECT_EQ(seen[0].energy, 3000.0);
    const auto after = reader->find_job_and_trial("mnist-seen", 64, trial.trial_number);
    ASSERT_TRUE(after && after->second);
    EXPECT_EQ(after->second->time, 12.5);
    EXPECT_EQ(after->second->converged, true);
    EXPECT_EQ(reader->next_trial_number("mnist-seen"), trial.trial_number + 1);
}

// The inputs probing found unequal between the backends (a 500 quoting SQL,
// or PostgreSQL alone refusing a real GPU's name) or silently wrong: each is
// a 422 naming the field, or stored faithfully, the same on both.
TEST_P(BsoApi, InputsAreCheckedAlikeOnBothBackends) {
    const auto field_of = [](const Reply& r) { return r.body["detail"][0]["loc"].back(); };
    auto twice = spec("mnist-1");
    twice["batch_sizes"] = {8, 16, 16, 128};
    auto r = call(http::verb::post, "/jobs", twice);
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_EQ(field_of(r), "batch_sizes");
    EXPECT_EQ(r.body.dump().find("INSERT"), std::string::npos) << r.body;

    // A real GPU name longer than the original's 30-character column is stored as given.
    auto laptop = spec("mnist-laptop");
    laptop["gpu_model"] = "NVIDIA GeForce RTX 4090 Laptop GPU";
    r = call(http::verb::post, "/jobs", laptop);
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(r.body["gpu_model"], "NVIDIA GeForce RTX 4090 Laptop GPU");
    open();  // read back from the database, not from memory
    r = call(http::verb::post, "/jobs", laptop);
    EXPECT_EQ(r.status, 200) << r.body << ": the stored spec differs from the one sent";
    // Ids and names up to the columns' 400 characters (counted as characters, as PostgreSQL does).
    const std::string long_id = "mnist" + std::string(395, 'x');
    r = call(http::verb::post, "/jobs", spec(long_id));
    EXPECT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(predict(long_id)["job_id"], long_id);
    auto accented = spec("mnist-accent");
    accented["gpu_model"] = std::string(200, 'x') + [] { std::string e; for (int i = 0; i < 200; ++i) e += "\u00e9"; return e; }();
    EXPECT_EQ(call(http::verb::post, "/jobs", accented).status, 201);
    for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
             {"job_id", "mnist" + std::string(396, 'x')},
             {"gpu_model", std::string(401, 'g')},
             {"num_pruning_rounds", 0},
             {"max_epochs", json::parse("9223372036854775808")},
             {"number_of_gpus", json::parse("18446744073709551615")},
             {"default_batch_size", 1e300},
             {"window_size", -1e300}}) {
        auto bad = spec("mnist-bad");
        bad[field] = value;
        r = call(http::verb::post, "/jobs", bad);
        EXPECT_EQ(r.status, 422) << field << ": " << r.body;
        if (r.status == 422) {
            EXPECT_EQ(field_of(r), field) << r.body;
        }
    }
    auto prefix = spec("x");
    prefix.erase("job_id");
    prefix["job_id_prefix"] = std::string(392, 'p');
    r = call(http::verb::post, "/jobs", prefix);
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_EQ(field_of(r), "job_id_prefix");
    // A batch size beyond int64 in a list, and in a report.
    auto huge = spec("mnist-huge");
    huge["batch_sizes"] = json::array({8, json::parse("9223372036854775808")});
    EXPECT_EQ(call(http::verb::post, "/jobs", huge).status, 422);
    EXPECT_EQ(call(http::verb::post, "/report", json{{"job_id", "mnist-1"}, {"batch_size", 1e300}, {"trial_number", 1},
                                                     {"time", 1}, {"energy", 1}, {"metric", 1}, {"current_epoch", 1}})
                  .status,
              422);
}

// Ids that are not percent-encoded UTF-8 are a 422 (they were a 500 and a log line per request).
TEST_P(BsoApi, UndecodableQueryIdsAre422s) {
    for (const char* target : {"/jobs/batch_size?job_id=%FF", "/jobs/batch_size?job_id=%C3%28"}) {
        const auto r = call(http::verb::get, target);
        EXPECT_EQ(r.status, 422) << target << ": " << r.body;
        EXPECT_EQ(r.body["detail"][0]["loc"], json({"query", "job_id"}));
    }
    EXPECT_EQ(call(http::verb::delete_, "/jobs?job_id=%FF").status, 422);
    EXPECT_EQ(call(http::verb::post, "/jobs", std::string(100000, '[')).status, 422);
}

// A database failure is a 500 that says so; its text, which quotes SQL, goes to the log only.
TEST_P(BsoApi, NoResponseBodyCarriesSql) {
    ASSERT_EQ(call(http::verb::post, "/jobs", spec("mnist-1")).status, 201);
    std::vector<std::string> logged;
    router_ = std::make_unique<Router>(*service_, [&logged](http_server::LogLevel, const std::string& line) {
        logged.push_back(line);
    });
    if (GetParam() == "postgresql") {
        ASSERT_TRUE(cluster().sql(location_.substr(location_.rfind('/') + 1), "DROP TABLE bso_trial"));
    } else {
        ASSERT_EQ(std::system(("sqlite3 '" + location_ + "' 'DROP TABLE bso_trial'").c_str()), 0);
    }
    const auto r = call(http::verb::get, "/jobs/batch_size?job_id=mnist-1");
    EXPECT_EQ(r.status, 500) << r.body;
    for (const char* sql : {"SELECT", "INSERT", "bso_", "FROM"}) EXPECT_EQ(r.body.dump().find(sql), std::string::npos) << r.body;
    ASSERT_EQ(logged.size(), 1U);
    EXPECT_NE(logged[0].find("bso_trial"), std::string::npos) << logged[0];
}

// The original server's database (its Job, BatchSize, GaussianTsArmState and
// Trial tables, as its schema.py names them): refused at start with a message
// that says so, never answered "Unknown job" for the original's jobs.
TEST_P(BsoApi, TheOriginalServersDatabaseIsRefusedAtStart) {
    std::string location;
    const std::string tables[] = {
        R"(CREATE TABLE "Job" (job_id VARCHAR(400) PRIMARY KEY, gpu_model VARCHAR(30) NOT NULL))",
        R"(CREATE TABLE "Trial" (job_id VARCHAR(400) NOT NULL, trial_number INTEGER NOT NULL))"};
    if (GetParam() == "postgresql") {
        const std::string name = "bso_original_" + std::to_string(::getpid());
        location = cluster().new_database(name);
        for (const auto& table : tables) {
            std::string escaped;
            for (const char c : table) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
            ASSERT_TRUE(cluster().sql(name, escaped)) << escaped;
        }
    } else {
        location = (dir_ / "original.db").string();
        for (const auto& table : tables)
            ASSERT_EQ(std::system(("sqlite3 '" + location + "' '" + table + "'").c_str()), 0) << table;
    }
    try {
        (void)Database::open(location);
        FAIL() << "the original server's database was opened";
    } catch (const BsoError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("original Zeus batch-size server's tables (Job, Trial)"), std::string::npos) << message;
        EXPECT_NE(message.find("does not import"), std::string::npos) << message;
        EXPECT_NE(message.find("--database"), std::string::npos) << message;
    }
}

INSTANTIATE_TEST_SUITE_P(Sqlite, BsoApi, ::testing::Values("sqlite"));
INSTANTIATE_TEST_SUITE_P(Postgres, BsoApi, ::testing::Values("postgresql"));

}  // namespace
}  // namespace zeus::bso
