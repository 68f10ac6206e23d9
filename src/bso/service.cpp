#include "bso/service.hpp"

#include <openssl/sha.h>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include "zeus/platform/python_float.hpp"

namespace zeus::bso {
namespace {

double system_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string sha256_hex(const std::string& text) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
    std::string hex;
    for (auto byte : digest) hex += fmt::format("{:02x}", byte);
    return hex;
}

std::vector<std::unique_ptr<Database>> single(std::unique_ptr<Database> database) {
    std::vector<std::unique_ptr<Database>> pool;
    pool.push_back(std::move(database));
    return pool;
}

}  // namespace

Service::Service(std::unique_ptr<Database> database, Clock clock) : Service(single(std::move(database)), std::move(clock)) {}

Service::Service(std::vector<std::unique_ptr<Database>> pool, Clock clock)
    : pool_(std::move(pool)), clock_(clock ? std::move(clock) : Clock(system_seconds)) {
    if (pool_.empty()) throw BsoError(500, "the batch-size optimizer needs at least one database connection");
    for (auto& db : pool_) {
        idle_.push_back(db.get());
        db->on_connection_events([this](bool lost, const std::string& why) { connection_event(lost, why); });
    }
}

void Service::connection_event(bool lost, const std::string& why) {
    std::string message;
    {
        const std::lock_guard guard(outage_mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (lost) {
            // Each pooled connection finds out on its own, one request after
            // another: one line per outage, not one per connection.
            if (outage_told_ && now - lost_since_ < std::chrono::seconds(30)) return;
            outage_told_ = true;
            recovery_pending_ = true;
            lost_since_ = now;
            message = "zeus bso-server: " + why + "; reconnecting at each request until it is back";
        } else {
            if (!recovery_pending_) return;
            recovery_pending_ = false;
            message = fmt::format("zeus bso-server: {} after {:.1f} s", why,
                                  std::chrono::duration<double>(now - lost_since_).count());
        }
    }
    if (log_) log_(message);
    else std::cerr << message << "\n";
}

Service::Lease::Lease(Service& service) : service_(service) {
    std::unique_lock guard(service_.pool_mutex_);
    service_.pool_freed_.wait(guard, [this] { return !service_.idle_.empty(); });
    db_ = service_.idle_.back();
    service_.idle_.pop_back();
}

Service::Lease::~Lease() {
    {
        std::lock_guard guard(service_.pool_mutex_);
        service_.idle_.push_back(db_);
    }
    service_.pool_freed_.notify_one();
}

std::unique_lock<std::mutex> Service::lock(const std::string& key) {
    std::shared_ptr<std::mutex> m;
    {
        std::lock_guard guard(locks_mutex_);
        auto& slot = locks_[key];
        if (!slot) slot = std::make_shared<std::mutex>();
        m = slot;
    }
    // The map keeps every lock it hands out alive, so the reference stays valid.
    return std::unique_lock<std::mutex>(*m);
}

JobRecord Service::require_job(Database& db, const std::string& job_id) {
    auto job = db.find_job(job_id);
    if (!job) throw BsoError(400, "Unknown job(" + job_id + "). Please register the job first");
    return *job;
}

Service::Registration Service::register_job(JobSpec spec) {
    auto held = lock("prefix:" + spec.job_id_prefix);
    Lease lease(*this);
    Database& db = *lease;
    Database::Transaction tx(db);
    if (!spec.job_id) {
        // "{prefix}-{sha256(str(time.time()))[:8]}", retried until unused.
        do {
            spec.job_id = spec.job_id_prefix + "-" + sha256_hex(python_float_repr(clock_())).substr(0, 8);
        } while (db.find_job(*spec.job_id, Database::BatchSizes::Skip));
    } else if (auto registered = db.find_job(*spec.job_id)) {
        if (!(registered->spec == spec))
            throw BsoError(409, "JobSpec doesn't match with existing jobSpec. Use a new job_id for different configuration");
        return {false, spec};
    }
    JobRecord job;
    job.spec = spec;
    job.exp_default_batch_size = spec.default_batch_size;
    job.min_cost_batch_size = spec.default_batch_size;
    if (spec.mab_seed) job.rng_state = Pcg64::from_seed(static_cast<std::uint64_t>(*spec.mab_seed)).state_json();
    db.insert_job(job);
    tx.commit();
    return {true, spec};
}

TrialIdentity Service::create_trial(Database& db, const JobRecord& job, std::int64_t batch_size, TrialType type) {
    Trial trial;
    trial.trial_number = db.next_trial_number(*job.spec.job_id);
    trial.batch_size = batch_size;
    trial.type = type;
    db.insert_trial(*job.spec.job_id, trial);
    return {*job.spec.job_id, batch_size, trial.trial_number};
}

std::int64_t Service::predict_mab(Database& db, JobRecord& job, const std::vector<ArmState>& arms) {
    if (!job.spec.mab_seed) {
        ClockSeededDraws draws(static_cast<std::uint64_t>(std::floor(clock_())));
        return thompson_predict(arms, job.spec.mab_num_explorations, draws);
    }
    if (!job.rng_state) throw BsoError(400, "Seed is set but generator state is none. Should be impossible");
    Pcg64 rng = Pcg64::from_state_json(*job.rng_state);
    const auto bs = thompson_predict(arms, job.spec.mab_num_explorations, rng);
    job.rng_state = rng.state_json();
    db.update_job_state(job);
    return bs;
}

TrialIdentity Service::predict(const std::string& job_id) {
    auto held = lock("job:" + job_id);
    Lease lease(*this);
    Database& db = *lease;
    Database::Transaction tx(db);
    JobRecord job = require_job(db, job_id);
    TrialIdentity next;
    if (job.stage == Stage::MAB) {
        const auto bs = predict_mab(db, job, db.arms(job_id));
        next = create_trial(db, job, bs, TrialType::MAB);
    } else {
        std::map<std::int64_t, std::vector<Trial>> explorations;
        for (auto& trial : db.trials(job_id))
            if (trial.type == TrialType::Exploration && trial.status != TrialStatus::Failed)
                explorations[trial.batch_size].push_back(trial);
        const auto step = next_pruning_step(job.spec, explorations);
        switch (step.kind) {
            case PruningStep::Kind::Explore: next = create_trial(db, job, step.batch_size, TrialType::Exploration); break;
            case PruningStep::Kind::Concurrent:
                next = create_trial(db, job, job.min_cost_batch_size, TrialType::Concurrent);
                break;
            case PruningStep::Kind::Mab: {
                std::vector<ArmState> arms;
                for (const auto bs : step.arms) {
                    std::vector<double> rewards;
                    for (const auto& trial : explorations[bs]) {
                        if (!trial.energy || !trial.time)
                            throw BsoError(400, fmt::format("Trial {} has no energy or time set.", trial.trial_number));
                        rewards.push_back(-zeus_cost(*trial.energy, *trial.time, job.spec.eta_knob, job.spec.max_power));
                    }
                    arms.push_back(fit_arm(bs, job.spec.mab_prior_mean, job.spec.mab_prior_precision, rewards));
                    db.upsert_arm(job_id, arms.back());
                }
                job.stage = Stage::MAB;
                db.update_job_state(job);
                next = create_trial(db, job, predict_mab(db, job, arms), TrialType::MAB);
                break;
            }
        }
    }
    tx.commit();
    return next;
}

Service::ReportContext Service::read_report_context(Database& db, const TrainingResult& result) {
    // decide_report and the arm update need the spec's knobs, not its batch sizes.
    auto found = db.find_job_and_trial(result.trial.job_id, result.trial.batch_size, result.trial.trial_number);
    if (!found) throw BsoError(400, "Unknown job " + result.trial.job_id);
    if (!found->second)
        throw BsoError(400, fmt::format("Unknown trial job_id='{}' batch_size={} trial_number={}", result.trial.job_id,
                                        result.trial.batch_size, result.trial.trial_number));
    return {std::move(found->first), std::move(*found->second)};
}

ReportResponse Service::report(const TrainingResult& result) {
    auto held = lock("job:" + result.trial.job_id);
    Lease lease(*this);
    Database& db = *lease;
    ReportedProgress progress = result.progress;
    progress.batch_size = result.trial.batch_size;
    {
        // Most reports only say "keep training": they write nothing, so they
        // are answered from one read without beginning and rolling back a
        // transaction (one round trip on PostgreSQL instead of four). The job's lock
        // keeps what was read current; anything else goes the full way.
        db.ensure_connected();
        std::optional<ReportContext> read;
        try {
            read = read_report_context(db, result);
        } catch (const BsoError&) {
            throw;
        } catch (const std::exception&) {
            // A read is safe to repeat: once, on a connection that broke unseen.
            if (!db.connection_broken()) throw;
            db.ensure_connected();
            read = read_report_context(db, result);
        }
        const auto& [job, trial] = *read;
        if (trial.status == TrialStatus::Dispatched) {
            const auto decision = decide_report(job.spec, job.min_cost, progress);
            if (!decision.stop_train) return {false, false, decision.message};
        }
    }
    Database::Transaction tx(db);
    auto [job, trial] = read_report_context(db, result);
    if (trial.status != TrialStatus::Dispatched) {
        if (!trial.converged)
            throw BsoError(400, fmt::format("Trial({}) is already reported but converged is not set.", trial.trial_number));
        return {true, *trial.converged, fmt::format("Result for this trial({}) is already reported.", trial.trial_number)};
    }
    const auto decision = decide_report(job.spec, job.min_cost, progress);
    if (!decision.stop_train) return {false, false, decision.message};

    if (job.stage == Stage::MAB) {
        std::vector<double> history;  // Succeeded trials of this batch size, newest first
        const auto all = db.trials(job.spec.job_id.value_or(""));
        for (auto it = all.rbegin(); it != all.rend(); ++it) {
            if (it->batch_size != trial.batch_size || it->status != TrialStatus::Succeeded) continue;
            history.push_back(-zeus_cost(it->energy.value_or(0), it->time.value_or(0), job.spec.eta_knob, job.spec.max_power));
        }
        const auto rewards = windowed_rewards(history, job.spec.window_size, -decision.cost);
        bool has_arm = false;
        for (const auto& arm : db.arms(result.trial.job_id)) has_arm = has_arm || arm.batch_size == trial.batch_size;
        if (!has_arm)
            throw BsoError(400, fmt::format("MAB stage but Arm for batch size({}) is not found.", trial.batch_size));
        if (trial.type != TrialType::MAB)
            throw BsoError(400, "Cannot update an arm since this trial is not issued from MAB stage.");
        db.upsert_arm(result.trial.job_id,
                        fit_arm(trial.batch_size, job.spec.mab_prior_mean, job.spec.mab_prior_precision, rewards));
    }
    trial.status = TrialStatus::Succeeded;
    trial.time = progress.time;
    trial.energy = progress.energy;
    trial.converged = decision.converged;
    db.update_trial(result.trial.job_id, trial);
    if (!job.min_cost || *job.min_cost > decision.cost) {
        job.min_cost = decision.cost;
        job.min_cost_batch_size = trial.batch_size;
        db.update_job_state(job);
    }
    tx.commit();
    return {true, decision.converged, decision.message};
}

void Service::end_trial(const TrialIdentity& id) {
    auto held = lock("job:" + id.job_id);
    Lease lease(*this);
    Database& db = *lease;
    Database::Transaction tx(db);
    auto trial = db.find_trial(id.job_id, id.batch_size, id.trial_number);
    if (!trial)
        throw BsoError(404, fmt::format("Could not find the trial: job_id='{}' batch_size={} trial_number={}", id.job_id,
                                        id.batch_size, id.trial_number));
    if (trial->status == TrialStatus::Dispatched) {
        trial->status = TrialStatus::Failed;
        db.update_trial(id.job_id, *trial);
    }
    tx.commit();
}

void Service::delete_job(const std::string& job_id) {
    auto held = lock("job:" + job_id);
    Lease lease(*this);
    Database& db = *lease;
    Database::Transaction tx(db);
    if (!db.delete_job(job_id)) throw BsoError(404, "No job was deleted.");
    tx.commit();
}

}  // namespace zeus::bso
