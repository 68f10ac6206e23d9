// The batch-size optimizer's operations, one database transaction each, as
// the original's ZeusBatchSizeOptimizer (server/optimizer.py): register,
// predict (GET /jobs/batch_size), report, end_trial, delete. Requests are
// serialised: the database session is one, so a job's requests never
// interleave (the original's per-job lock) and neither do any others.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "bso/database.hpp"
#include "zeus/optimizer/batch_size/algorithm.hpp"

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
    JobRecord require_job(const std::string& job_id);
    TrialIdentity create_trial(const JobRecord& job, std::int64_t batch_size, TrialType type);
    std::int64_t predict_mab(JobRecord& job, const std::vector<ArmState>& arms);

    std::mutex mutex_;
    std::unique_ptr<Database> db_;
    Clock clock_;
};

}  // namespace zeus::bso
