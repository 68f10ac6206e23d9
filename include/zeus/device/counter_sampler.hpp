// A raw hardware counter bound to its accumulator, and a background reader
// that reads a set of them often enough never to miss a wrap, without the
// user doing anything. The reader is a thread owned by the sampler and joined
// when it is destroyed: no helper processes, nothing left behind by a fork.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "zeus/device/counter_accumulator.hpp"

namespace zeus {

class AccumulatedCounter {
  public:
    using ReadRaw = std::function<Result<std::uint64_t>()>;
    using Clock = CounterAccumulator::Clock;

    AccumulatedCounter(CounterSpec spec, ReadRaw read_raw);

    // Where a reading stands among the others: drawn right before the
    // hardware is read, and handed to record() with the value read.
    class ReadTicket {
        friend class AccumulatedCounter;
        std::optional<std::uint64_t> since;  // the last reading fed when it was drawn
        std::uint64_t total_then = 0;        // the total then (counts)
        std::uint64_t began = 0;
    };

    // Reads the hardware now and returns the accumulated total. Threads read
    // the hardware concurrently (no lock is held across a read, so one that
    // loses its core stalls nobody else); a reading that a concurrent one has
    // already overtaken is not fed, so the accumulator still sees readings
    // in order. ReadRaw must therefore be safe to call from several threads.
    [[nodiscard]] Result<Joules> read();
    // For a caller that reads the hardware itself (e.g. together with other
    // fields in one device call): draw a ticket right before that read and
    // record() the value with it right after, and it is ordered with every
    // other reading exactly as read()'s are, however many threads read. There
    // is deliberately no way to feed a value without a ticket: a value read
    // outside the lock and fed as "the newest" after a newer one was fed
    // looks like a counter restart.
    [[nodiscard]] ReadTicket ticket();
    // Returns the total as of this reading: when a newer reading was fed
    // first, that total less what the counter moved from this one to it
    // (never less than the total when the ticket was drawn, so one thread's
    // totals never go back).
    Joules record(std::uint64_t raw, const ReadTicket& ticket);
    [[nodiscard]] CounterStats stats() const { return accumulator_.stats(); }
    [[nodiscard]] const CounterAccumulator& accumulator() const { return accumulator_; }

  private:
    // Where a read() sampled the hardware, in the order of read tickets:
    // after the ticket `began` was drawn and before `ended` was seen.
    struct ReadSpan {
        std::uint64_t began = 0;
        std::uint64_t ended = 0;
    };
    // What a reading knew when it began (its ticket) and where it sampled
    // the hardware.
    struct ReadOrder {
        const ReadTicket& ticket;
        ReadSpan span;
    };
    // Feeds `raw` unless a reading fed already sampled the hardware after it;
    // returns the total as of `raw` (see record()).
    Joules feed(std::uint64_t raw, const ReadOrder& order, Clock::time_point finished);
    // The total as of `raw`, a reading that the last one fed overtook.
    [[nodiscard]] Joules total_as_of(std::uint64_t raw, const ReadTicket& ticket) const;
    [[nodiscard]] bool overtaken(std::uint64_t raw, const ReadOrder& order) const;
    // How far the counter moved forwards from `from` to `to`: modulo the
    // range; on a counter that never wraps, a decrease is "further than any".
    [[nodiscard]] std::uint64_t forward(std::uint64_t from, std::uint64_t to) const;
    [[nodiscard]] std::uint64_t masked(std::uint64_t raw) const;

    CounterAccumulator accumulator_;
    ReadRaw read_raw_;
    std::mutex feed_mutex_;  // orders readings into the accumulator; never held across read_raw_
    std::optional<std::uint64_t> last_fed_raw_;
    ReadSpan last_fed_span_;
    Clock::time_point last_fed_at_{};        // when the last reading fed was finished (never decreases)
    // Drawn by every reading before it reads the hardware and looked at
    // right after: whether one reading was sampled before another follows from the
    // order of these atomic operations alone, however long a reader then
    // waits for feed_mutex_ or loses its core.
    std::atomic<std::uint64_t> read_tickets_{0};
    // last_fed_raw_ for reads to note, without the lock, before they read
    // the hardware: ordered by the atomics, not by clocks, which are not
    // exactly in step across CPUs.
    std::atomic<bool> fed_any_{false};
    std::atomic<std::uint64_t> last_fed_published_{0};
    std::atomic<std::uint64_t> total_published_{0};  // the accumulator's total after it
};

class CounterSampler {
  public:
    // Reads every counter at least once per `period` (clamped to [1 ms, 60 s]);
    // by default the shortest max_read_interval() among them.
    explicit CounterSampler(std::vector<std::shared_ptr<AccumulatedCounter>> counters,
                            std::optional<std::chrono::nanoseconds> period = std::nullopt);
    CounterSampler(const CounterSampler&) = delete;
    CounterSampler& operator=(const CounterSampler&) = delete;
    ~CounterSampler();

    [[nodiscard]] std::chrono::nanoseconds period() const { return period_; }
    // Wakes and joins the thread (the destructor does too); counters are
    // then read only when asked. Idempotent.
    void stop();

  private:
    void run();

    std::vector<std::shared_ptr<AccumulatedCounter>> counters_;
    std::chrono::nanoseconds period_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace zeus
