// The PFO server's state (zeus/optimizer/pipeline_frequency/server/
// job_manager.py) without HTTP: jobs, their ranks, the schedule barrier and
// the profiling-result rounds. The original runs one asyncio task per job;
// here every event (a registration, a schedule request, a result) advances
// the job under one lock, and a schedule request is answered through a
// callback when the last rank has asked, so no thread ever waits on a rank.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "zeus/perseus/scheduler.hpp"
#include "zeus/perseus/server.hpp"

namespace zeus::perseus {

// A request the server refuses: the HTTP status and FastAPI's `detail`.
class PfoError : public std::runtime_error {
  public:
    PfoError(int status, const std::string& detail) : std::runtime_error(detail), status_(status) {}
    [[nodiscard]] int status() const { return status_; }

  private:
    int status_;
};

// What a schedule request gets: its rank's schedule, or the error that ended
// the job's scheduler (400 for bad input, 500 otherwise, as the original).
using ScheduleOutcome = std::variant<FrequencySchedule, PfoError>;
using ScheduleReply = std::function<void(ScheduleOutcome)>;

class JobManager {
  public:
    using Clock = std::chrono::steady_clock;
    using Warn = std::function<void(const std::string&)>;

    explicit JobManager(PfoSettings settings, Warn warn = {});
    ~JobManager();
    JobManager(const JobManager&) = delete;
    JobManager& operator=(const JobManager&) = delete;

    // All of these throw PfoError for a request to refuse.
    std::string register_job(const JobInfo& job, std::time_t now);
    void register_rank(const std::string& job_id, const RankInfo& rank);
    // `reply` runs once: now, or when the job's last rank asks (on that
    // request's thread), with the manager's lock not held.
    void request_schedule(const std::string& job_id, std::size_t rank, ScheduleReply reply);
    void report_result(const std::string& job_id, const ProfilingResult& result);

    // Forgets jobs idle for longer than max_job_idle_time; their waiting
    // schedule requests get a 410. Returns how many went.
    std::size_t evict_idle(Clock::time_point now);
    [[nodiscard]] std::size_t job_count() const;

  private:
    struct Job;
    using Pending = std::vector<std::pair<ScheduleReply, ScheduleOutcome>>;

    Job& find(const std::string& job_id);
    void start_scheduler(const std::string& job_id, Job& job);
    void advance(const std::string& job_id, Job& job, Pending& pending);
    void fail(Job& job, const PfoError& error, Pending& pending);
    // Where a job's dumps go: one directory per job right under dump_dir,
    // its name the job id with every byte that could leave it encoded.
    [[nodiscard]] std::filesystem::path job_dump_dir(const std::string& job_id) const;
    // With dumps on, makes the job's dump directory, exclusively: false when
    // it exists (made by another server sharing dump_dir, or an earlier run).
    bool claim_dump_dir(const std::string& job_id);
    void dump(const std::filesystem::path& file, const std::string& text);
    static void deliver(Pending& pending);

    PfoSettings settings_;
    Warn warn_;
    mutable std::mutex mutex_;
    std::map<std::string, std::unique_ptr<Job>> jobs_;
};

}  // namespace zeus::perseus
