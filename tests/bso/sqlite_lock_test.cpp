// A SQLite database shared with other processes: another writer holding the
// file's write lock for a while, and a second batch-size server on the same
// file. Before, a request that met the lock failed at once with 500, and the
// connection then kept the failed transaction's snapshot, so that every later
// write failed with "database is locked" until the server was restarted.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bso/router.hpp"
#include "load_through_outage.hpp"

namespace zeus::bso {
namespace {

namespace http = http_server::http;
using nlohmann::json;
using testing::call;

// Another process (not this one: SQLite's locks between processes are the
// case at hand) that, once told to, takes the file's write lock, writes, and
// holds it for `hold` before committing. Forked at once, while this process
// runs no other thread (a thread inside SQLite at the fork could leave one of
// its mutexes locked in the child); told later, under load.
class OtherWriter {
  public:
    OtherWriter(const std::string& file, std::chrono::milliseconds hold) {
        int go[2];
        int held[2];
        if (::pipe(go) != 0 || ::pipe(held) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(go[1]);
            ::close(held[0]);
            char byte = 0;
            if (::read(go[0], &byte, 1) != 1) ::_exit(1);
            sqlite3* db = nullptr;
            if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) ::_exit(2);
            sqlite3_busy_timeout(db, 10000);
            if (sqlite3_exec(db,
                             "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS other_writer (x INTEGER);"
                             " INSERT INTO other_writer VALUES (1);",
                             nullptr, nullptr, nullptr) != SQLITE_OK)
                ::_exit(3);
            (void)!::write(held[1], "x", 1);
            ::usleep(static_cast<useconds_t>(hold.count()) * 1000);
            ::_exit(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK ? 0 : 4);
        }
        ::close(go[0]);
        ::close(held[1]);
        go_ = go[1];
        held_ = held[0];
    }
    ~OtherWriter() {
        ::close(go_);
        ::close(held_);
        (void)wait();
    }
    OtherWriter(const OtherWriter&) = delete;
    OtherWriter& operator=(const OtherWriter&) = delete;

    // Tells it to take the lock; true once it holds it.
    bool take() {
        char byte = 0;
        return ::write(go_, "x", 1) == 1 && ::read(held_, &byte, 1) == 1;
    }
    // Its exit status once it committed (0) or failed.
    int wait() {
        if (pid_ <= 0) return status_;
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
    }

  private:
    pid_t pid_ = -1;
    int go_ = -1;
    int held_ = -1;
    int status_ = -1;
};

class BsoSqliteLock : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("bso-sqlite-lock-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        file_ = (dir_ / "bso.db").string();
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // As `zeus bso-server` serves a SQLite file: one connection.
    void open(std::chrono::milliseconds busy_timeout = Database::kDefaultBusyTimeout) {
        service_ = std::make_unique<Service>(Database::open(file_, Database::latest_schema_version(), busy_timeout));
        router_ = std::make_unique<Router>(*service_);
    }
    std::string register_job(const std::string& prefix = "lock") {
        const json job{{"job_id_prefix", prefix}, {"batch_sizes", {8, 16, 32}}, {"default_batch_size", 16},
                       {"max_power", 300.0},      {"number_of_gpus", 1},        {"gpu_model", "A100"}};
        const auto created = call(*router_, http::verb::post, "/jobs", job.dump());
        EXPECT_EQ(created.status, 201) << created.body;
        return created.body.value("job_id", "");
    }
    // `count` predictions at once; their answers.
    std::vector<testing::Answer> burst(const std::string& job_id, int count) {
        std::vector<testing::Answer> answers(static_cast<std::size_t>(count));
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < answers.size(); ++i) {
            threads.emplace_back(
                [&, i] { answers[i] = call(*router_, http::verb::get, "/jobs/batch_size?job_id=" + job_id); });
        }
        for (auto& thread : threads) thread.join();
        return answers;
    }

    // Every acknowledged trial is stored (it can be ended), each with a trial number of its own.
    void expect_all_kept(const std::vector<json>& acknowledged) {
        std::set<std::int64_t> numbers;
        for (const auto& trial : acknowledged) {
            numbers.insert(trial["trial_number"].get<std::int64_t>());
            const auto ended = call(*router_, http::verb::patch, "/trials", trial.dump());
            EXPECT_EQ(ended.status, 200) << trial << " was acknowledged and is gone: " << ended.body;
        }
        EXPECT_EQ(numbers.size(), acknowledged.size()) << "two requests were given the same trial number";
    }

    std::filesystem::path dir_;
    std::string file_;
    std::unique_ptr<Service> service_;
    std::unique_ptr<Router> router_;
};

// The case: a 3 s writer, 20 parallel requests. Within the busy
// timeout every request waits for the lock and succeeds; once the writer is
// gone every later request succeeds, and every acknowledged trial is kept.
TEST_F(BsoSqliteLock, RequestsWaitForAnotherWritersLockAndTheServerStaysWell) {
    open();
    const auto job_id = register_job();
    std::vector<json> acknowledged;
    {
        OtherWriter writer(file_, std::chrono::milliseconds(3000));
        ASSERT_TRUE(writer.take());
        for (const auto& answer : burst(job_id, 20)) {
            EXPECT_EQ(answer.status, 200) << answer.body;
            if (answer.status == 200) acknowledged.push_back(answer.body);
        }
        EXPECT_EQ(writer.wait(), 0);
    }
    for (const auto& answer : burst(job_id, 20)) {
        EXPECT_EQ(answer.status, 200) << answer.body;
        if (answer.status == 200) acknowledged.push_back(answer.body);
    }
    expect_all_kept(acknowledged);
}

// A lock held past the busy timeout: 503 with Retry-After, never 500, and
// the server is well again as soon as the lock is gone.
TEST_F(BsoSqliteLock, ALockHeldPastTheBusyTimeoutIs503WithRetryAfterAndPasses) {
    open(std::chrono::milliseconds(200));
    const auto job_id = register_job();
    {
        OtherWriter writer(file_, std::chrono::milliseconds(1500));
        ASSERT_TRUE(writer.take());
        const auto answer = call(*router_, http::verb::get, "/jobs/batch_size?job_id=" + job_id);
        EXPECT_EQ(answer.status, 503) << answer.body;
        EXPECT_EQ(answer.retry_after, "1");
        EXPECT_NE(answer.body.dump().find("locked"), std::string::npos) << answer.body;
        EXPECT_NE(answer.body.dump().find(file_), std::string::npos) << answer.body;
        EXPECT_EQ(answer.body.dump().find("INSERT"), std::string::npos) << answer.body;
        EXPECT_EQ(writer.wait(), 0);
    }
    for (const auto& answer : burst(job_id, 20)) EXPECT_EQ(answer.status, 200) << answer.body;
}

// The load of the PostgreSQL restart test, with another process holding the
// write lock for 3 s (longer than a short busy timeout) as the outage.
TEST_F(BsoSqliteLock, TheRestartTestsLoadSurvivesAnotherWriter) {
    open(std::chrono::milliseconds(500));
    OtherWriter writer(file_, std::chrono::milliseconds(3000));
    testing::expect_load_survives(*router_, [&writer] { return writer.take() && writer.wait() == 0; }, {503});
}

// Two servers on one file (each a process with its own connection) share
// it: bursts at the same job from both are all answered, with distinct
// trial numbers, and every acknowledged trial is stored.
TEST_F(BsoSqliteLock, TwoServersOnOneFileShareIt) {
    open();
    const auto job_id = register_job();
    const auto child_answers = dir_ / "child.json";
    const pid_t child = ::fork();
    if (child == 0) {
        // The second server: its own connection, opened after the fork. The
        // parent's connection is left as it is, never closed here: closing
        // it could checkpoint and remove the write-ahead log under the parent.
        (void)router_.release();
        (void)service_.release();
        open();
        json acknowledged = json::array();
        int failures = 0;
        for (int round = 0; round < 5; ++round) {
            for (const auto& answer : burst(job_id, 10)) {
                if (answer.status == 200)
                    acknowledged.push_back(answer.body);
                else
                    ++failures;
            }
        }
        std::ofstream(child_answers) << acknowledged.dump();
        ::_exit(failures == 0 ? 0 : 1);
    }
    std::vector<json> acknowledged;
    for (int round = 0; round < 5; ++round) {
        for (const auto& answer : burst(job_id, 10)) {
            EXPECT_EQ(answer.status, 200) << answer.body;
            if (answer.status == 200) acknowledged.push_back(answer.body);
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the second server had failed requests";
    for (const auto& trial : json::parse(std::ifstream(child_answers))) acknowledged.push_back(trial);
    EXPECT_EQ(acknowledged.size(), 100U);
    expect_all_kept(acknowledged);
}

}  // namespace
}  // namespace zeus::bso
