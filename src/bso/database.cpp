#include "bso/database.hpp"

#include "bso/prepared_query.hpp"

#include <libpq-fe.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace zeus::bso {
namespace {

// A statement only PostgreSQL runs (SQLite has no ALTER COLUMN and needs none).
constexpr std::string_view kPostgresqlOnly = "-- postgresql only\n";

// Numbered migrations: entry i brings a database from version i to i + 1.
// Never edit a shipped entry; append a new one.
const std::vector<std::vector<std::string>>& migrations() {
    static const std::vector<std::vector<std::string>> all{
        {
            // 1: the original's schema (server/database/schema.py), one table per class.
            "CREATE TABLE bso_job ("
            " job_id VARCHAR(400) PRIMARY KEY, job_id_prefix VARCHAR(400) NOT NULL,"
            " default_batch_size BIGINT NOT NULL, higher_is_better_metric BIGINT NOT NULL,"
            " eta_knob DOUBLE PRECISION NOT NULL, beta_knob DOUBLE PRECISION, target_metric DOUBLE PRECISION NOT NULL,"
            " max_epochs BIGINT NOT NULL, num_pruning_rounds BIGINT NOT NULL, window_size BIGINT NOT NULL,"
            " max_power DOUBLE PRECISION NOT NULL, number_of_gpus BIGINT NOT NULL, gpu_model VARCHAR(30) NOT NULL,"
            " mab_prior_mean DOUBLE PRECISION NOT NULL, mab_prior_precision DOUBLE PRECISION NOT NULL,"
            " mab_num_explorations BIGINT NOT NULL, mab_seed BIGINT, mab_random_generator_state VARCHAR(10000),"
            " exp_default_batch_size BIGINT NOT NULL, stage VARCHAR(10) NOT NULL, min_cost DOUBLE PRECISION,"
            " min_cost_batch_size BIGINT NOT NULL)",
            "CREATE TABLE bso_batch_size (job_id VARCHAR(400) NOT NULL REFERENCES bso_job(job_id) ON DELETE CASCADE,"
            " batch_size BIGINT NOT NULL, PRIMARY KEY (job_id, batch_size))",
            "CREATE TABLE bso_arm (job_id VARCHAR(400) NOT NULL, batch_size BIGINT NOT NULL,"
            " param_mean DOUBLE PRECISION NOT NULL, param_precision DOUBLE PRECISION NOT NULL,"
            " reward_precision DOUBLE PRECISION NOT NULL, num_observations BIGINT NOT NULL,"
            " PRIMARY KEY (job_id, batch_size),"
            " FOREIGN KEY (job_id, batch_size) REFERENCES bso_batch_size(job_id, batch_size) ON DELETE CASCADE)",
            "CREATE TABLE bso_trial (job_id VARCHAR(400) NOT NULL, trial_number BIGINT NOT NULL,"
            " batch_size BIGINT NOT NULL, start_timestamp BIGINT NOT NULL, end_timestamp BIGINT,"
            " type VARCHAR(12) NOT NULL, status VARCHAR(12) NOT NULL,"
            " time DOUBLE PRECISION, energy DOUBLE PRECISION, converged BIGINT,"
            " PRIMARY KEY (job_id, trial_number),"
            " FOREIGN KEY (job_id, batch_size) REFERENCES bso_batch_size(job_id, batch_size) ON DELETE CASCADE)",
        },
        {
            // 2: the per-batch-size history queries (report's window, pruning's replay).
            "CREATE INDEX bso_trial_by_batch_size ON bso_trial (job_id, batch_size, status, trial_number)",
        },
        {
            // 3: GPU names are longer than the original's 30 characters ("NVIDIA
            // GeForce RTX 4090 Laptop GPU" is 34). SQLite never enforced the length.
            std::string(kPostgresqlOnly) + "ALTER TABLE bso_job ALTER COLUMN gpu_model TYPE VARCHAR(400)",
        },
    };
    return all;
}

const char* stage_name(Stage s) { return s == Stage::MAB ? "MAB" : "Pruning"; }
const char* type_name(TrialType t) {
    switch (t) {
        case TrialType::Exploration: return "Exploration";
        case TrialType::Concurrent: return "Concurrent";
        case TrialType::MAB: return "MAB";
    }
    return "?";
}
const char* status_name(TrialStatus s) {
    switch (s) {
        case TrialStatus::Dispatched: return "Dispatched";
        case TrialStatus::Succeeded: return "Succeeded";
        case TrialStatus::Failed: return "Failed";
    }
    return "?";
}
TrialType parse_type(const std::string& s) {
    if (s == "Exploration") return TrialType::Exploration;
    if (s == "Concurrent") return TrialType::Concurrent;
    if (s == "MAB") return TrialType::MAB;
    throw BsoError(500, "database holds an unknown trial type '" + s + "'");
}
TrialStatus parse_status(const std::string& s) {
    if (s == "Dispatched") return TrialStatus::Dispatched;
    if (s == "Succeeded") return TrialStatus::Succeeded;
    if (s == "Failed") return TrialStatus::Failed;
    throw BsoError(500, "database holds an unknown trial status '" + s + "'");
}

template <typename T>
std::optional<T> nullable(const soci::row& row, std::size_t i) {
    if (row.get_indicator(i) == soci::i_null) return std::nullopt;
    return row.get<T>(i);
}

// SQLite reports a column's type from its declaration, PostgreSQL from its
// storage; integers are read through long long either way.
std::int64_t integer(const soci::row& row, std::size_t i) {
    switch (row.get_properties(i).get_data_type()) {
        case soci::dt_integer: return row.get<int>(i);
        case soci::dt_long_long: return row.get<long long>(i);
        case soci::dt_unsigned_long_long: return static_cast<std::int64_t>(row.get<unsigned long long>(i));
        case soci::dt_double: return static_cast<std::int64_t>(row.get<double>(i));
        default: return std::stoll(row.get<std::string>(i));
    }
}
std::optional<std::int64_t> nullable_integer(const soci::row& row, std::size_t i) {
    if (row.get_indicator(i) == soci::i_null) return std::nullopt;
    return integer(row, i);
}
double real(const soci::row& row, std::size_t i) {
    if (row.get_properties(i).get_data_type() == soci::dt_double) return row.get<double>(i);
    return static_cast<double>(integer(row, i));
}
std::optional<double> nullable_real(const soci::row& row, std::size_t i) {
    if (row.get_indicator(i) == soci::i_null) return std::nullopt;
    return real(row, i);
}

// The trial's columns (kTrialColumns) from `first` on.
Trial trial_from_row(const soci::row& row, std::size_t first = 0) {
    Trial t;
    t.trial_number = integer(row, first);
    t.batch_size = integer(row, first + 1);
    t.type = parse_type(row.get<std::string>(first + 2));
    t.status = parse_status(row.get<std::string>(first + 3));
    t.time = nullable_real(row, first + 4);
    t.energy = nullable_real(row, first + 5);
    if (auto c = nullable_integer(row, first + 6)) t.converged = *c != 0;
    return t;
}

constexpr const char* kTrialColumns = "t.trial_number, t.batch_size, t.type, t.status, t.time, t.energy, t.converged";

// SOCI reads a PostgreSQL connect string as key=value pairs and mangles a
// URI, so libpq itself turns the URI into its keywords first.
std::string libpq_keywords(const std::string& uri) {
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(uri.c_str(), &error);
    if (!options) {
        std::string message = error ? error : "out of memory";
        PQfreemem(error);
        throw std::runtime_error("invalid PostgreSQL URI: " + message);
    }
    std::string keywords;
    for (auto* option = options; option->keyword; ++option) {
        if (!option->val) continue;
        std::string value;
        for (const char* c = option->val; *c; ++c) {
            if (*c == '\\' || *c == '\'') value += '\\';
            value += *c;
        }
        keywords += std::string(option->keyword) + "='" + value + "' ";
    }
    PQconninfoFree(options);
    return keywords;
}

sqlite_api::sqlite3* sqlite_connection(soci::session& session) {
    // The backend of a SQLite session (SOCI exports no typeinfo for a dynamic_cast).
    auto* backend = static_cast<soci::sqlite3_session_backend*>(session.get_backend());
    return backend == nullptr ? nullptr : backend->conn_;
}

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Database::Database(std::unique_ptr<soci::session> session, bool postgresql)
    : session_(std::move(session)), postgresql_(postgresql) {}
Database::~Database() = default;

int Database::latest_schema_version() { return static_cast<int>(migrations().size()); }

std::unique_ptr<Database> Database::open(const std::string& location, int target_version,
                                         std::chrono::milliseconds busy_timeout) {
    const bool postgresql = location.starts_with("postgresql://") || location.starts_with("postgres://");
    std::string path = location;
    if (location.starts_with("sqlite://")) path = location.substr(std::string("sqlite://").size());
    if (!postgresql && path.empty()) throw BsoError(500, "--database is empty: give a SQLite file path or a postgresql:// URI");
    auto session = std::make_unique<soci::session>();
    try {
        if (postgresql) {
            session->open(soci::postgresql, libpq_keywords(location));
            configure_postgresql(*session);
        } else {
            // Quoted so that paths with spaces survive SOCI's key=value parsing.
            session->open(soci::sqlite3, "db=\"" + path + "\"");
            sqlite_api::sqlite3_busy_timeout(sqlite_connection(*session), static_cast<int>(busy_timeout.count()));
            *session << "PRAGMA journal_mode=WAL";
            // In WAL mode NORMAL syncs at checkpoints rather than at every
            // commit: a committed request survives the server's crash (kill
            // -9), and only an OS crash or power loss can lose the last
            // commits -- SQLite's documented trade-off for WAL.
            *session << "PRAGMA synchronous=NORMAL";
            *session << "PRAGMA foreign_keys=ON";
        }
    } catch (const std::exception& e) {
        throw BsoError(500, fmt::format("cannot open the database {}: {} (check the path or URI, that it is writable, "
                                        "and for PostgreSQL that the server runs and the user may connect)",
                                        postgresql ? "at the PostgreSQL URI" : "file '" + path + "'", e.what()));
    }
    std::unique_ptr<Database> db(new Database(std::move(session), postgresql));
    db->sqlite_path_ = path;
    db->busy_timeout_ = busy_timeout;
    db->refuse_the_originals_tables(postgresql ? "the PostgreSQL database" : "'" + path + "'");
    db->migrate(postgresql ? "the PostgreSQL database" : "'" + path + "'", target_version);
    return db;
}

void Database::configure_postgresql(soci::session& session) {
    // "relation already exists, skipping" notices are not for the user.
    session << "SET client_min_messages TO WARNING";
    // As SQLite's synchronous=NORMAL: a commit does not wait for its WAL
    // flush, which on a slow disk was most of a request's p99. A committed
    // request survives this server's crash; only a crash of PostgreSQL or the
    // OS may lose the last commits (at most 3 x wal_writer_delay), never
    // consistency. A setting the URI's options, the role or the database give
    // explicitly is kept.
    std::string source;
    session << "SELECT source FROM pg_settings WHERE name = 'synchronous_commit'", soci::into(source);
    if (source == "default" || source == "configuration file") session << "SET synchronous_commit TO off";
}

bool Database::connection_broken() {
    if (!postgresql_) return false;
    // The backend of a PostgreSQL session (SOCI exports no typeinfo for a dynamic_cast).
    auto* backend = static_cast<soci::postgresql_session_backend*>(session_->get_backend());
    return backend == nullptr || backend->conn_ == nullptr || PQstatus(backend->conn_) != CONNECTION_OK;
}

void Database::ensure_connected() {
    if (!connection_broken()) return;
    if (events_) events_(true, "the connection to PostgreSQL broke (the server restarted, or the backend was ended)");
    queries_.clear();  // prepared on the connection that is gone
    try {
        session_->reconnect();
        configure_postgresql(*session_);
    } catch (const std::exception& e) {
        throw BsoError(503, fmt::format("the PostgreSQL server cannot be reached ({}); the batch-size server "
                                        "reconnects at the next request: retry shortly",
                                        e.what()));
    }
    if (events_) events_(false, "reconnected to PostgreSQL");
}

void Database::refuse_the_originals_tables(const std::string& location) {
    // The original server's SQLAlchemy tables (server/database/schema.py).
    const std::string names = "'Job', 'BatchSize', 'GaussianTsArmState', 'Trial'";
    const std::string sql =
        postgresql_ ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND "
                      "table_name IN (" + names + ") ORDER BY table_name"
                    : "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (" + names + ") ORDER BY name";
    std::vector<std::string> found;
    try {
        soci::rowset<std::string> rows = (session_->prepare << sql);
        for (const auto& name : rows) found.push_back(name);
    } catch (const std::exception& e) {
        throw BsoError(500, fmt::format("cannot read the list of tables in {}: {}", location, e.what()));
    }
    if (found.empty()) return;
    std::string list;
    for (const auto& name : found) list += (list.empty() ? "" : ", ") + name;
    throw BsoError(500, fmt::format(
        "{} holds the original Zeus batch-size server's tables ({}). This server keeps its state in tables of its "
        "own and does not import the original's jobs: it would answer \"Unknown job\" for every one of them. Give "
        "this server a database of its own (--database or ZEUS_BSO_DATABASE_URL), and let the original server finish "
        "the jobs it holds (docs/batch-size-optimizer.md)",
        location, list));
}

int Database::schema_version() {
    long long version = 0;
    soci::indicator ind = soci::i_null;
    *session_ << "SELECT MAX(version) FROM bso_schema_version", soci::into(version, ind);
    return ind == soci::i_null ? 0 : static_cast<int>(version);
}

void Database::migrate(const std::string& location, int target_version) {
    try {
        *session_ << "CREATE TABLE IF NOT EXISTS bso_schema_version (version BIGINT NOT NULL)";
        int version = schema_version();
        if (version > latest_schema_version()) {
            throw BsoError(500, fmt::format("{} has batch-size optimizer schema version {}, newer than this server's {}: "
                                            "run a newer zeus bso-server, or give another --database",
                                            location, version, latest_schema_version()));
        }
        const int target = std::min(target_version, latest_schema_version());
        while (version < target) {
            // The version is read again under the write lock: a second
            // server opening the same SQLite file at the same time finds the
            // step done by the first instead of failing on its tables.
            Transaction tx(*this);
            version = schema_version();
            if (version >= target) break;
            for (const auto& statement : migrations()[static_cast<std::size_t>(version)]) {
                if (statement.starts_with(kPostgresqlOnly) && !postgresql_) continue;
                *session_ << statement;
            }
            long long next = version + 1;
            *session_ << "INSERT INTO bso_schema_version (version) VALUES (:v)", soci::use(next);
            tx.commit();
            version = static_cast<int>(next);
        }
    } catch (const BsoError&) {
        throw;
    } catch (const std::exception& e) {
        throw BsoError(500, fmt::format("cannot create or upgrade the schema in {}: {}", location, e.what()));
    }
}

Database::Transaction::Transaction(Database& db) : db_(db) {
    if (!db.postgresql_) {
        db.roll_back_sqlite();  // nothing can be left open, but a stale snapshot would be fatal
        db.run_sqlite_transaction_step("BEGIN IMMEDIATE");
        sqlite_open_ = true;
        return;
    }
    db.ensure_connected();
    try {
        tx_ = std::make_unique<soci::transaction>(*db.session_);
    } catch (const std::exception&) {
        // Broken since the last request without libpq knowing (a restart
        // while the connection was idle): BEGIN was the first to find out.
        if (!db.connection_broken()) throw;
        db.ensure_connected();
        tx_ = std::make_unique<soci::transaction>(*db.session_);
    }
}
Database::Transaction::~Transaction() {
    if (sqlite_open_) db_.roll_back_sqlite();
}

void Database::Transaction::commit() {
    if (!sqlite_open_) {
        tx_->commit();
        return;
    }
    db_.run_sqlite_transaction_step("COMMIT");
    sqlite_open_ = false;
}

void Database::run_sqlite_transaction_step(const char* sql) {
    auto* connection = sqlite_connection(*session_);
    const int result = sqlite_api::sqlite3_exec(connection, sql, nullptr, nullptr, nullptr);
    if (result == SQLITE_OK) return;
    const std::string why = sqlite_api::sqlite3_errmsg(connection);
    if ((result & 0xff) == SQLITE_BUSY || (result & 0xff) == SQLITE_LOCKED) {
        throw BsoError(503, fmt::format("the SQLite database '{}' is locked by another connection or process, and "
                                        "stayed locked for {} ms ({}); retry shortly",
                                        sqlite_path_, busy_timeout_.count(), why));
    }
    throw std::runtime_error(fmt::format("{} failed on the SQLite database '{}': {}", sql, sqlite_path_, why));
}

// Every statement of the connection is reset before the ROLLBACK: one that a
// failed step left mid-way would keep the transaction's read snapshot, so
// that this connection never saw another's commits again and every later
// write failed with "database is locked" (the same trial number each time)
// until the server restarted.
void Database::roll_back_sqlite() noexcept {
    auto* connection = sqlite_connection(*session_);
    if (connection == nullptr) return;
    for (auto* statement = sqlite_api::sqlite3_next_stmt(connection, nullptr); statement != nullptr;
         statement = sqlite_api::sqlite3_next_stmt(connection, statement)) {
        sqlite_api::sqlite3_reset(statement);
    }
    if (sqlite_api::sqlite3_get_autocommit(connection) == 0) {
        (void)sqlite_api::sqlite3_exec(connection, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

PreparedQuery& Database::query(const std::string& sql) {
    auto& slot = queries_[sql];
    if (!slot) slot = std::make_unique<PreparedQuery>(*session_, sql);
    return *slot;
}

namespace {

// Qualified where a join would make a name ambiguous; the queries name
// bso_job "j" and bso_trial "t".
constexpr const char* kJobColumns =
    "j.job_id, job_id_prefix, default_batch_size, higher_is_better_metric, eta_knob, beta_knob,"
    " target_metric, max_epochs, num_pruning_rounds, window_size, max_power, number_of_gpus, gpu_model,"
    " mab_prior_mean, mab_prior_precision, mab_num_explorations, mab_seed, mab_random_generator_state,"
    " exp_default_batch_size, stage, min_cost, min_cost_batch_size";
constexpr std::size_t kJobColumnCount = 22;

JobRecord job_from_row(const soci::row& row) {
    JobRecord job;
    JobSpec& s = job.spec;
    s.job_id = row.get<std::string>(0);
    s.job_id_prefix = row.get<std::string>(1);
    s.default_batch_size = integer(row, 2);
    s.higher_is_better_metric = integer(row, 3) != 0;
    s.eta_knob = real(row, 4);
    s.beta_knob = nullable_real(row, 5);
    s.target_metric = real(row, 6);
    s.max_epochs = integer(row, 7);
    s.num_pruning_rounds = integer(row, 8);
    s.window_size = integer(row, 9);
    s.max_power = real(row, 10);
    s.number_of_gpus = integer(row, 11);
    s.gpu_model = row.get<std::string>(12);
    s.mab_prior_mean = real(row, 13);
    s.mab_prior_precision = real(row, 14);
    s.mab_num_explorations = integer(row, 15);
    s.mab_seed = nullable_integer(row, 16);
    job.rng_state = nullable<std::string>(row, 17);
    job.exp_default_batch_size = integer(row, 18);
    job.stage = row.get<std::string>(19) == "MAB" ? Stage::MAB : Stage::Pruning;
    job.min_cost = nullable_real(row, 20);
    job.min_cost_batch_size = integer(row, 21);
    return job;
}

}  // namespace

std::optional<JobRecord> Database::find_job(const std::string& job_id, BatchSizes batch_sizes) {
    std::optional<JobRecord> job;
    query(std::string("SELECT ") + kJobColumns + " FROM bso_job j WHERE j.job_id = :id")
        .for_each_row([&](const soci::row& row) { job = job_from_row(row); }, job_id);
    if (!job || batch_sizes == BatchSizes::Skip) return job;
    query("SELECT batch_size FROM bso_batch_size WHERE job_id = :id ORDER BY batch_size")
        .for_each_row([&](const soci::row& row) { job->spec.batch_sizes.push_back(integer(row, 0)); }, job_id);
    return job;
}

std::optional<std::pair<JobRecord, std::optional<Trial>>> Database::find_job_and_trial(const std::string& job_id,
                                                                                        std::int64_t batch_size,
                                                                                        std::int64_t trial_number) {
    std::optional<std::pair<JobRecord, std::optional<Trial>>> found;
    // One round trip for every epoch's report: the job (without its batch
    // sizes) and, when it exists, the trial.
    static const std::string sql = std::string("SELECT ") + kJobColumns + ", " + kTrialColumns +
                                   " FROM bso_job j LEFT JOIN bso_trial t ON t.job_id = j.job_id"
                                   " AND t.batch_size = :bs AND t.trial_number = :n WHERE j.job_id = :id";
    query(sql).for_each_row(
        [&](const soci::row& row) {
            std::optional<Trial> trial;
            if (row.get_indicator(kJobColumnCount) != soci::i_null) trial = trial_from_row(row, kJobColumnCount);
            found.emplace(job_from_row(row), std::move(trial));
        },
        static_cast<long long>(batch_size), static_cast<long long>(trial_number), job_id);
    return found;
}

void Database::insert_job(const JobRecord& job) {
    const JobSpec& s = job.spec;
    const std::string id = s.job_id.value_or("");
    query("INSERT INTO bso_job (job_id, job_id_prefix, default_batch_size, higher_is_better_metric, eta_knob,"
          " beta_knob, target_metric, max_epochs, num_pruning_rounds, window_size, max_power, number_of_gpus,"
          " gpu_model, mab_prior_mean, mab_prior_precision, mab_num_explorations, mab_seed,"
          " mab_random_generator_state, exp_default_batch_size, stage, min_cost, min_cost_batch_size) VALUES"
          " (:id, :prefix, :dbs, :hib, :eta, :beta, :target, :maxep, :rounds, :window, :maxp, :gpus, :model,"
          " :pmean, :pprec, :nexp, :seed, :rng, :expdbs, :stage, :minc, :minbs)")
        .execute(id, s.job_id_prefix, s.default_batch_size, s.higher_is_better_metric ? 1 : 0, s.eta_knob, s.beta_knob,
                 s.target_metric, s.max_epochs, s.num_pruning_rounds, s.window_size, s.max_power, s.number_of_gpus,
                 s.gpu_model, s.mab_prior_mean, s.mab_prior_precision, s.mab_num_explorations, s.mab_seed, job.rng_state,
                 job.exp_default_batch_size, std::string(stage_name(job.stage)), job.min_cost, job.min_cost_batch_size);
    auto& insert_size = query("INSERT INTO bso_batch_size (job_id, batch_size) VALUES (:id, :bs)");
    for (const auto bs : s.batch_sizes) insert_size.execute(id, bs);
}

void Database::update_job_state(const JobRecord& job) {
    query("UPDATE bso_job SET stage = :stage, min_cost = :minc, min_cost_batch_size = :minbs,"
          " mab_random_generator_state = :rng WHERE job_id = :id")
        .execute(std::string(stage_name(job.stage)), job.min_cost, job.min_cost_batch_size, job.rng_state,
                 job.spec.job_id.value_or(""));
}

bool Database::delete_job(const std::string& job_id) {
    long long count = 0;
    query("SELECT COUNT(*) FROM bso_job WHERE job_id = :id")
        .for_each_row([&](const soci::row& row) { count = integer(row, 0); }, job_id);
    if (count == 0) return false;
    // Children first, so that no backend depends on cascading deletes.
    query("DELETE FROM bso_trial WHERE job_id = :id").execute(job_id);
    query("DELETE FROM bso_arm WHERE job_id = :id").execute(job_id);
    query("DELETE FROM bso_batch_size WHERE job_id = :id").execute(job_id);
    query("DELETE FROM bso_job WHERE job_id = :id").execute(job_id);
    return true;
}

std::int64_t Database::next_trial_number(const std::string& job_id) {
    std::optional<std::int64_t> max;
    query("SELECT MAX(trial_number) FROM bso_trial WHERE job_id = :id")
        .for_each_row([&](const soci::row& row) { max = nullable_integer(row, 0); }, job_id);
    return max ? *max + 1 : 1;
}

void Database::insert_trial(const std::string& job_id, const Trial& trial) {
    query("INSERT INTO bso_trial (job_id, trial_number, batch_size, start_timestamp, type, status)"
          " VALUES (:id, :n, :bs, :start, :type, :status)")
        .execute(job_id, trial.trial_number, trial.batch_size, now_seconds(), std::string(type_name(trial.type)),
                 std::string(status_name(trial.status)));
}

void Database::update_trial(const std::string& job_id, const Trial& trial) {
    std::optional<long long> converged;
    if (trial.converged) converged = *trial.converged ? 1 : 0;
    query("UPDATE bso_trial SET status = :status, end_timestamp = :end, time = :time, energy = :energy,"
          " converged = :conv WHERE job_id = :id AND trial_number = :n")
        .execute(std::string(status_name(trial.status)), now_seconds(), trial.time, trial.energy, converged, job_id,
                 trial.trial_number);
}

std::optional<Trial> Database::find_trial(const std::string& job_id, std::int64_t batch_size, std::int64_t trial_number) {
    std::optional<Trial> trial;
    query(std::string("SELECT ") + kTrialColumns +
          " FROM bso_trial t WHERE job_id = :id AND batch_size = :bs AND trial_number = :n")
        .for_each_row([&](const soci::row& row) { trial = trial_from_row(row); }, job_id, batch_size, trial_number);
    return trial;
}

std::vector<Trial> Database::trials(const std::string& job_id) {
    std::vector<Trial> out;
    query(std::string("SELECT ") + kTrialColumns + " FROM bso_trial t WHERE job_id = :id ORDER BY trial_number")
        .for_each_row([&](const soci::row& row) { out.push_back(trial_from_row(row)); }, job_id);
    return out;
}

std::vector<ArmState> Database::arms(const std::string& job_id) {
    std::vector<ArmState> out;
    query("SELECT batch_size, param_mean, param_precision, reward_precision, num_observations"
          " FROM bso_arm WHERE job_id = :id ORDER BY batch_size")
        .for_each_row(
            [&](const soci::row& row) {
                out.push_back({integer(row, 0), real(row, 1), real(row, 2), real(row, 3), integer(row, 4)});
            },
            job_id);
    return out;
}

void Database::upsert_arm(const std::string& job_id, const ArmState& arm) {
    query("DELETE FROM bso_arm WHERE job_id = :id AND batch_size = :bs").execute(job_id, arm.batch_size);
    query("INSERT INTO bso_arm (job_id, batch_size, param_mean, param_precision, reward_precision, num_observations)"
          " VALUES (:id, :bs, :mean, :prec, :rprec, :n)")
        .execute(job_id, arm.batch_size, arm.param_mean, arm.param_precision, arm.reward_precision, arm.num_observations);
}

}  // namespace zeus::bso
