// One SQL statement prepared once per connection and run many times, for the
// database layer (database.cpp) only.
//
// Why: on PostgreSQL SOCI plans a one-time query anew on every run, and a
// `session.prepare` rowset costs three round trips (PREPARE, EXECUTE,
// DEALLOCATE when it goes out of scope). Prepared once and kept, every run is
// one round trip with no planning. The parameters' types are taken from the
// first run's arguments (std::string, an integer, double, or std::optional of
// one for a nullable value) and must not change afterwards.
//
// Every run reads its rows to the end, even when the caller throws: an
// unfinished SQLite statement would hold its read snapshot open and hide other
// connections' commits from this one.
#pragma once

#include <soci/soci.h>

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeus::bso {

class PreparedQuery {
public:
    PreparedQuery(soci::session& session, std::string sql) : session_(session), sql_(std::move(sql)) {
        returns_rows_ = sql_.starts_with("SELECT");
    }
    PreparedQuery(const PreparedQuery&) = delete;
    PreparedQuery& operator=(const PreparedQuery&) = delete;

    // Runs a statement that returns no rows.
    template <typename... Args>
    void execute(const Args&... args) {
        bind(args...);
        statement_->execute(true);
    }

    // Runs a query and calls on_row(const soci::row&) for each row in order;
    // returns how many there were.
    template <typename OnRow, typename... Args>
    std::size_t for_each_row(OnRow&& on_row, const Args&... args) {
        bind(args...);
        statement_->execute(false);
        std::size_t count = 0;
        try {
            while (statement_->fetch()) {
                ++count;
                on_row(row_);
            }
        } catch (...) {
            try {
                while (statement_->fetch()) {
                }
            } catch (...) {  // the first error is the one to report
            }
            throw;
        }
        return count;
    }

private:
    struct Slot {
        enum class Kind { Text, Integer, Real } kind = Kind::Text;
        std::string text;
        long long integer = 0;
        double real = 0;
        soci::indicator indicator = soci::i_ok;
    };

    static void assign(Slot& slot, const std::string& value) {
        slot.kind = Slot::Kind::Text;
        slot.text = value;
    }
    template <std::integral T>
    static void assign(Slot& slot, T value) {
        slot.kind = Slot::Kind::Integer;
        slot.integer = static_cast<long long>(value);
    }
    static void assign(Slot& slot, double value) {
        slot.kind = Slot::Kind::Real;
        slot.real = value;
    }
    template <typename T>
    static void assign(Slot& slot, const std::optional<T>& value) {
        assign(slot, value.value_or(T{}));
        slot.indicator = value ? soci::i_ok : soci::i_null;
    }

    template <typename... Args>
    void bind(const Args&... args) {
        std::vector<Slot> next(sizeof...(Args));
        std::size_t i = 0;
        (assign(next[i++], args), ...);
        if (!statement_) {
            slots_ = std::move(next);
            prepare();
            return;
        }
        if (next.size() != slots_.size()) throw std::logic_error("prepared query run with another parameter count: " + sql_);
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            if (next[k].kind != slots_[k].kind) throw std::logic_error("prepared query run with another parameter type: " + sql_);
            // Assigned in place: the statement holds references to these.
            slots_[k].text = std::move(next[k].text);
            slots_[k].integer = next[k].integer;
            slots_[k].real = next[k].real;
            slots_[k].indicator = next[k].indicator;
        }
    }

    void prepare() {
        auto statement = std::make_unique<soci::statement>(session_);
        for (auto& slot : slots_) {
            switch (slot.kind) {
                case Slot::Kind::Text: statement->exchange(soci::use(slot.text, slot.indicator)); break;
                case Slot::Kind::Integer: statement->exchange(soci::use(slot.integer, slot.indicator)); break;
                case Slot::Kind::Real: statement->exchange(soci::use(slot.real, slot.indicator)); break;
            }
        }
        if (returns_rows_) statement->exchange(soci::into(row_));
        statement->alloc();
        statement->prepare(sql_);
        statement->define_and_bind();
        statement_ = std::move(statement);  // only a statement that prepared is kept
    }

    soci::session& session_;
    std::string sql_;
    bool returns_rows_ = false;
    std::vector<Slot> slots_;  // sized once, before prepare(): the statement refers to its elements
    soci::row row_;
    std::unique_ptr<soci::statement> statement_;
};

}  // namespace zeus::bso
