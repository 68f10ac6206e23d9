// The batch-size optimizer's database layer: one class over SOCI with two
// backends, SQLite (a file; the default) and PostgreSQL (a libpq URI). The
// schema is created and upgraded by numbered migrations when a database is
// opened; a database from a newer server is refused, never altered.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "zeus/bso/algorithm.hpp"

namespace soci {
class session;
class transaction;
}  // namespace soci

namespace zeus::bso {

class PreparedQuery;

// A job as stored: its spec (job_id always set) and the optimizer's state.
struct JobRecord {
    JobSpec spec;
    Stage stage = Stage::Pruning;
    std::optional<double> min_cost;
    std::int64_t min_cost_batch_size = 0;
    std::int64_t exp_default_batch_size = 0;
    std::optional<std::string> rng_state;  // numpy PCG64 state JSON; set when mab_seed is
};

class Database {
public:
    // "postgresql://..." or "postgres://..." (a libpq URI), "sqlite://PATH" or
    // a plain file path. Throws BsoError(500) naming the database and the fix
    // when it cannot be opened or its schema is newer than this server's.
    // `schema_version` below the latest stops the upgrade there (tests of
    // the upgrade path build an older database this way).
    // SQLite: a request waits up to `busy_timeout` for a write lock another
    // connection or process holds, then fails with BsoError(503).
    static constexpr std::chrono::milliseconds kDefaultBusyTimeout{5000};
    static std::unique_ptr<Database> open(const std::string& location, int schema_version = latest_schema_version(),
                                          std::chrono::milliseconds busy_timeout = kDefaultBusyTimeout);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    static int latest_schema_version();
    [[nodiscard]] int schema_version();
    [[nodiscard]] bool is_postgresql() const { return postgresql_; }

    // Called with true when this connection is found broken (PostgreSQL
    // restarted, the backend terminated) and with false once it is back.
    using ConnectionEvents = std::function<void(bool lost, const std::string& why)>;
    void on_connection_events(ConnectionEvents events) { events_ = std::move(events); }
    // PostgreSQL: a connection libpq knows to be broken is opened again (its
    // prepared statements with it). Throws BsoError(503) while the server
    // cannot be reached. Free when the connection is fine (no round trip).
    void ensure_connected();
    // Whether libpq knows this connection to be broken (never for SQLite).
    [[nodiscard]] bool connection_broken();

    // One transaction: commits on commit(), rolls back if destroyed before.
    // A BEGIN that fails on a broken connection reconnects and begins again
    // (nothing was done yet, so nothing can be done twice). On SQLite it
    // takes the write lock at BEGIN (BEGIN IMMEDIATE), waiting up to the busy
    // timeout for another connection or process to release it, then throws
    // BsoError(503): a transaction that read first and found the lock taken
    // only when it wrote could not wait (SQLite fails that at once).
    class Transaction {
    public:
        explicit Transaction(Database& db);
        ~Transaction();
        Transaction(const Transaction&) = delete;
        Transaction& operator=(const Transaction&) = delete;
        void commit();

    private:
        Database& db_;
        std::unique_ptr<soci::transaction> tx_;  // PostgreSQL
        bool sqlite_open_ = false;
    };

    // Without its batch sizes (spec.batch_sizes empty): one query instead of
    // two, for the requests that do not need them (every epoch's report).
    enum class BatchSizes { Read, Skip };
    std::optional<JobRecord> find_job(const std::string& job_id, BatchSizes batch_sizes = BatchSizes::Read);
    void insert_job(const JobRecord& job);
    void update_job_state(const JobRecord& job);  // stage, min cost, rng state
    bool delete_job(const std::string& job_id);

    std::int64_t next_trial_number(const std::string& job_id);
    void insert_trial(const std::string& job_id, const Trial& trial);
    void update_trial(const std::string& job_id, const Trial& trial);  // status, time, energy, converged
    // A report's context in one query: nullopt for an unknown job; the
    // trial is nullopt when the job has no such trial. The job's batch sizes
    // are not read.
    std::optional<std::pair<JobRecord, std::optional<Trial>>> find_job_and_trial(const std::string& job_id,
                                                                              std::int64_t batch_size,
                                                                              std::int64_t trial_number);
    std::optional<Trial> find_trial(const std::string& job_id, std::int64_t batch_size, std::int64_t trial_number);
    // All the job's trials, by trial number.
    std::vector<Trial> trials(const std::string& job_id);

    std::vector<ArmState> arms(const std::string& job_id);  // by batch size
    void upsert_arm(const std::string& job_id, const ArmState& arm);

private:
    Database(std::unique_ptr<soci::session> session, bool postgresql);
    // The session settings every PostgreSQL connection gets.
    static void configure_postgresql(soci::session& session);
    void migrate(const std::string& location, int target_version);
    // Throws BsoError naming the tables when the database is the original
    // server's (its Job, Trial, ... tables): its jobs are not imported.
    void refuse_the_originals_tables(const std::string& location);
    // The statement for `sql`, prepared on this connection at its first use.
    PreparedQuery& query(const std::string& sql);
    // SQLite: runs BEGIN IMMEDIATE, COMMIT; BsoError(503) when the lock stays taken.
    void run_sqlite_transaction_step(const char* sql);
    // SQLite: ends whatever transaction the connection is in, and releases
    // its read snapshot, whatever state a failure left its statements in.
    void roll_back_sqlite() noexcept;

    std::unique_ptr<soci::session> session_;
    bool postgresql_ = false;
    std::string sqlite_path_;  // for messages
    std::chrono::milliseconds busy_timeout_{kDefaultBusyTimeout};
    ConnectionEvents events_;
    // Declared after the session: destroyed before it.
    std::unordered_map<std::string, std::unique_ptr<PreparedQuery>> queries_;
};

}  // namespace zeus::bso
