// The batch-size optimizer's operations, one database transaction each, as
// the original's ZeusBatchSizeOptimizer (server/optimizer.py): register,
// predict (GET /jobs/batch_size), report, end_trial, delete. As in the
// original, a job's requests are serialised by a per-job lock (registration
// by a per-prefix lock); different jobs run in parallel, each request on a
// database connection of its own from a pool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <chrono>
#include <functional>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bso/database.hpp"
#include "zeus/bso/algorithm.hpp"

namespace zeus::bso {

struct TrialIdentity {
    std::string job_id;
    std::int64_t batch_size = 0;
    std::int64_t trial_number = 0;
};

struct TrainingResult {
    TrialIdentity trial;
    ReportedProgress progress;
};

struct ReportResponse {
    bool stop_train = false;
    bool converged = false;
    std::string message;
};

class Service {
public:
    // The wall clock in seconds (Python's time.time()): job-id generation and
    // the unseeded generator's seed. Replaceable in tests.
    using Clock = std::function<double()>;
    explicit Service(std::unique_ptr<Database> database, Clock clock = {});
    // One connection per concurrent request (SQLite: give one).
    explicit Service(std::vector<std::unique_ptr<Database>> pool, Clock clock = {});
    // Where a lost and regained database connection is reported, once per
    // outage, not per connection or request (default: stderr).
    void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }

    struct Registration {
        bool created = false;  // false: the same spec was registered before
        JobSpec job;           // with job_id set
    };
    // `spec` must be validated (batch sizes sorted, default among them).
    Registration register_job(JobSpec spec);
    TrialIdentity predict(const std::string& job_id);
    ReportResponse report(const TrainingResult& result);
    void end_trial(const TrialIdentity& trial);
    void delete_job(const std::string& job_id);

private:
    // A connection from the pool for one request; back when destroyed.
    class Lease {
    public:
        explicit Lease(Service& service);
        ~Lease();
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        Database& operator*() { return *db_; }

    private:
        Service& service_;
        Database* db_;
    };
    // The lock of one job id ("job:...") or prefix ("prefix:...").
    std::unique_lock<std::mutex> lock(const std::string& key);

    JobRecord require_job(Database& db, const std::string& job_id);
    struct ReportContext {
        JobRecord job;
        Trial trial;
    };
    // The job (without its batch sizes) and the trial a report is about;
    // BsoError(400) when either is unknown.
    static ReportContext read_report_context(Database& db, const TrainingResult& result);
    TrialIdentity create_trial(Database& db, const JobRecord& job, std::int64_t batch_size, TrialType type);
    std::int64_t predict_mab(Database& db, JobRecord& job, const std::vector<ArmState>& arms);

    std::vector<std::unique_ptr<Database>> pool_;
    std::vector<Database*> idle_;
    std::mutex pool_mutex_;
    std::condition_variable pool_freed_;
    std::mutex locks_mutex_;
    std::map<std::string, std::shared_ptr<std::mutex>> locks_;
    Clock clock_;
    std::function<void(const std::string&)> log_;
    std::mutex outage_mutex_;
    bool outage_told_ = false;
    bool recovery_pending_ = false;
    std::chrono::steady_clock::time_point lost_since_;
    void connection_event(bool lost, const std::string& why);
};

}  // namespace zeus::bso
