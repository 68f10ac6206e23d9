#include "perseus/job_manager.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "perseus/model_json.hpp"
#include "zeus/platform/read_user_file.hpp"
#include "zeus/platform/utf8.hpp"

namespace zeus::perseus {

namespace {

std::vector<std::vector<InstructionFrequency>> load_solution(const std::filesystem::path& path) {
    if (path.empty()) throw std::runtime_error("no solution file: set scheduler_args' solution_path (--solution)");
    auto text = read_user_file(path.string(), {"solution file", "--solution (solution_path)"});
    if (!text) throw std::runtime_error(text.error().describe());
    return parse_solution(*text, path.string());
}

bool three_d(const std::string& scheduler) { return scheduler == "PointSolution3D"; }

// A job id as one file name: the id holds the client's job_metadata, so
// '/' (which made "/../../x" a path out of the dump directory), NUL, control
// bytes and '%' itself are percent-encoded, and so is a leading '.'
// (no "." or ".." and no hidden directory).
std::string file_name_of(const std::string& job_id) {
    std::string name;
    for (std::size_t i = 0; i < job_id.size(); ++i) {
        const auto byte = static_cast<unsigned char>(job_id[i]);
        if (byte == '/' || byte == '%' || byte == '\\' || byte < 0x20 || byte == 0x7F || (i == 0 && byte == '.')) {
            static constexpr char kHex[] = "0123456789ABCDEF";
            name += '%';
            name += kHex[byte >> 4];
            name += kHex[byte & 0xF];
        } else {
            name += job_id[i];
        }
    }
    return name;
}

// Whether `path`, resolved (symbolic links followed as far as it exists),
// lies inside `directory`, resolved the same way.
bool inside(const std::filesystem::path& path, const std::filesystem::path& directory) {
    std::error_code error;
    const auto resolved = std::filesystem::weakly_canonical(path, error);
    if (error) return false;
    const auto root = std::filesystem::weakly_canonical(directory, error);
    if (error) return false;
    const auto relative = resolved.lexically_relative(root);
    return !relative.empty() && *relative.begin() != ".." && relative != ".";
}

std::string text(std::size_t value) { return std::to_string(value); }

}  // namespace

void check_settings(const PfoSettings& settings) {
    if (settings.scheduler != "PointSolution" && !three_d(settings.scheduler))
        throw PfoError(0, "unknown scheduler '" + settings.scheduler + "': use PointSolution or PointSolution3D");
    try {
        (void)load_solution(settings.solution_path);
    } catch (const std::exception& e) {
        throw PfoError(0, e.what());
    }
}

struct JobManager::Job {
    JobInfo info;
    std::vector<RankInfo> ranks;  // arrival order until all are in, then rank order
    bool started = false;         // every rank registered and the scheduler built
    std::vector<FrequencySchedule> schedules;  // the current round's, by rank
    std::optional<PfoError> failure;           // the scheduler's error, for every later request
    std::map<std::size_t, std::vector<ScheduleReply>> waiting;  // rank -> its requests this round
    bool gathering = false;  // schedules sent; collecting every rank's result
    std::map<std::size_t, ProfilingResult> results;
    std::size_t round = 0;
    Clock::time_point last_active = Clock::now();
};

JobManager::JobManager(PfoSettings settings, Warn warn) : settings_(std::move(settings)), warn_(std::move(warn)) {}

JobManager::~JobManager() = default;

std::string JobManager::register_job(const JobInfo& job, std::time_t now) {
    const std::lock_guard lock(mutex_);
    const std::string base = make_job_id(job, settings_.scheduler, now);
    // The original would overwrite a job registered in the same second with
    // the same degrees, here or in another server sharing the dump
    // directory; a suffix keeps both.
    std::string id = base;
    for (std::size_t n = 2; jobs_.contains(id) || !claim_dump_dir(id); ++n) id = base + "+" + text(n);
    auto state = std::make_unique<Job>();
    state->info = job;
    jobs_.emplace(id, std::move(state));
    return id;
}

JobManager::Job& JobManager::find(const std::string& job_id) {
    const auto it = jobs_.find(job_id);
    if (it == jobs_.end())
        throw PfoError(404, "unknown job id '" + job_id +
                                "': register the job first (POST /register_job), and note that jobs idle for " +
                                std::to_string(settings_.max_job_idle_time.count()) + " s are forgotten");
    it->second->last_active = Clock::now();
    return *it->second;
}

void JobManager::register_rank(const std::string& job_id, const RankInfo& rank) {
    Pending pending;
    {
        const std::lock_guard lock(mutex_);
        Job& job = find(job_id);
        const JobInfo& info = job.info;
        const auto outside = [&](const char* what, std::size_t value, const char* degree_name, std::size_t degree) {
            if (value >= degree)
                throw PfoError(400, std::string(what) + " " + text(value) + " is outside the job: its " + degree_name +
                                        " is " + text(degree) + " (valid: 0.." + text(degree - 1) + ")");
        };
        outside("rank", rank.rank, "world_size", info.world_size);
        outside("pp_rank", rank.pp_rank, "pp_degree", info.pp_degree);
        outside("dp_rank", rank.dp_rank, "dp_degree", info.dp_degree);
        outside("tp_rank", rank.tp_rank, "tp_degree", info.tp_degree);
        if (job.started || std::any_of(job.ranks.begin(), job.ranks.end(), [&](const RankInfo& r) { return r.rank == rank.rank; }))
            throw PfoError(400, "rank " + text(rank.rank) + " is already registered in job '" + job_id + "'");
        job.ranks.push_back(rank);
        if (job.ranks.size() == info.world_size) {
            start_scheduler(job_id, job);
            advance(job_id, job, pending);
        }
    }
    deliver(pending);
}

void JobManager::start_scheduler(const std::string& job_id, Job& job) {
    std::sort(job.ranks.begin(), job.ranks.end(), [](const RankInfo& a, const RankInfo& b) { return a.rank < b.rank; });
    job.started = true;
    if (settings_.dump_data) {
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& rank : job.ranks) ranks.push_back(to_json(rank));
        dump(job_dump_dir(job_id) / "ranks.json", json_text(ranks));
    }
    try {
        const auto solution = load_solution(settings_.solution_path);
        job.schedules = three_d(settings_.scheduler) ? point_solution_3d(solution, job.info, job.ranks)
                                                     : point_solution(solution, job.info.world_size);
    } catch (const std::exception& e) {
        job.failure = PfoError(500, settings_.scheduler + " could not start for job '" + job_id + "': " + e.what());
    }
}

void JobManager::request_schedule(const std::string& job_id, std::size_t rank, ScheduleReply reply) {
    Pending pending;
    {
        const std::lock_guard lock(mutex_);
        Job& job = find(job_id);
        if (rank >= job.info.world_size)
            throw PfoError(400, "rank " + text(rank) + " is outside job '" + job_id + "', whose world_size is " +
                                    text(job.info.world_size));
        job.waiting[rank].push_back(std::move(reply));
        advance(job_id, job, pending);
    }
    deliver(pending);
}

void JobManager::report_result(const std::string& job_id, const ProfilingResult& result) {
    Pending pending;
    {
        const std::lock_guard lock(mutex_);
        Job& job = find(job_id);
        if (result.rank >= job.info.world_size)
            throw PfoError(400, "a profiling result from rank " + text(result.rank) + ", outside job '" + job_id +
                                    "', whose world_size is " + text(job.info.world_size));
        if (job.results.contains(result.rank))
            throw PfoError(400, "rank " + text(result.rank) + " already reported its result for schedule " +
                                    text(job.round) + "; the next one is due after the next schedule");
        job.results.emplace(result.rank, result);
        advance(job_id, job, pending);
    }
    deliver(pending);
}

// The original's job task loop, run as far as the job's state allows:
// every rank asked -> answer them all; every rank reported -> observe, next round.
void JobManager::advance(const std::string& job_id, Job& job, Pending& pending) {
    const std::size_t world = job.info.world_size;
    for (;;) {
        if (job.failure) {
            fail(job, *job.failure, pending);
            return;
        }
        if (!job.started) return;
        if (!job.gathering && job.waiting.size() == world) {
            for (auto& [rank, replies] : job.waiting)
                for (auto& reply : replies) pending.emplace_back(std::move(reply), job.schedules.at(rank));
            job.waiting.clear();
            job.gathering = true;
            continue;
        }
        if (job.gathering && job.results.size() == world) {
            std::vector<ProfilingResult> results;
            for (auto& [rank, result] : job.results) results.push_back(std::move(result));
            job.results.clear();
            if (settings_.dump_data) {
                nlohmann::json prof = nlohmann::json::array(), sched = nlohmann::json::array();
                for (const auto& r : results) prof.push_back(to_json(r));
                for (const auto& s : job.schedules) sched.push_back(to_json(s));
                const auto dir = job_dump_dir(job_id);
                dump(dir / (text(job.round) + ".prof.json"), json_text(prof));
                dump(dir / (text(job.round) + ".sched.json"), json_text(sched));
            }
            // PointSolution has nothing to learn (its generator ends after the
            // first schedule, which then repeats); the 3-D view still
            // aggregates, so results that cannot be aggregated are an error.
            if (three_d(settings_.scheduler)) {
                try {
                    (void)aggregate_by_stage(results, job.info, job.ranks);
                } catch (const std::exception& e) {
                    job.failure = PfoError(500, settings_.scheduler + " could not observe the results of schedule " +
                                                    text(job.round) + " of job '" + job_id + "': " + e.what());
                }
            }
            ++job.round;
            job.gathering = false;
            continue;
        }
        return;
    }
}

void JobManager::fail(Job& job, const PfoError& error, Pending& pending) {
    for (auto& [rank, replies] : job.waiting)
        for (auto& reply : replies) pending.emplace_back(std::move(reply), error);
    job.waiting.clear();
}

void JobManager::deliver(Pending& pending) {
    for (auto& [reply, outcome] : pending) reply(std::move(outcome));
}

std::filesystem::path JobManager::job_dump_dir(const std::string& job_id) const {
    return settings_.dump_dir / file_name_of(job_id);
}

bool JobManager::claim_dump_dir(const std::string& job_id) {
    if (!settings_.dump_data) return true;
    std::error_code ignored;
    std::filesystem::create_directories(settings_.dump_dir, ignored);
    // mkdir is atomic across processes: of two servers making the same
    // name, exactly one succeeds.
    if (::mkdir(job_dump_dir(job_id).c_str(), 0777) == 0) return true;
    if (errno == EEXIST) return false;
    // Not a name taken: the dumps will fail and say so (dump()); the job goes on.
    return true;
}

void JobManager::dump(const std::filesystem::path& file, const std::string& text) {
    // The name is confined by file_name_of; this also stops a symbolic link
    // placed in the dump directory from leading the write elsewhere.
    if (!inside(file, settings_.dump_dir)) {
        if (warn_) warn_("refused to write " + file.string() + " (dump_data): it resolves outside the dump directory " +
                         settings_.dump_dir.string() + "; the job goes on without it");
        return;
    }
    std::error_code error;
    std::filesystem::create_directories(file.parent_path(), error);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out && warn_) warn_("could not write " + file.string() + " (dump_data); the job goes on without it");
}

std::size_t JobManager::evict_idle(Clock::time_point now) {
    Pending pending;
    std::size_t evicted = 0;
    {
        const std::lock_guard lock(mutex_);
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            if (now - it->second->last_active > settings_.max_job_idle_time) {
                fail(*it->second,
                     PfoError(410, "job '" + it->first + "' was idle for more than " +
                                       std::to_string(settings_.max_job_idle_time.count()) + " s and was forgotten"),
                     pending);
                it = jobs_.erase(it);
                ++evicted;
            } else {
                ++it;
            }
        }
    }
    deliver(pending);
    return evicted;
}

std::size_t JobManager::job_count() const {
    const std::lock_guard lock(mutex_);
    return jobs_.size();
}

}  // namespace zeus::perseus
