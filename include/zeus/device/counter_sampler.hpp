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

    // Reads the hardware now and returns the accumulated total. Threads read
    // the hardware concurrently (no lock is held across a read, so one that
    // loses its core stalls nobody else); a reading that a concurrent one has
    // already overtaken is not fed, so the accumulator still sees readings
    // in order. ReadRaw must therefore be safe to call from several threads.
    [[nodiscard]] Result<Joules> read();
    // Feeds a raw value the caller read itself (e.g. together with other
    // fields in one device call), in order with read(). Returns the total.
    Joules record(std::uint64_t raw);
    [[nodiscard]] CounterStats stats() const { return accumulator_.stats(); }
    [[nodiscard]] const CounterAccumulator& accumulator() const { return accumulator_; }

  private:
    // Where a read() sampled the hardware, in the order of read tickets:
    // after the ticket `began` was drawn and before `ended` was seen.
    struct ReadSpan {
        std::uint64_t began = 0;
        std::uint64_t ended = 0;
    };
    // What a read() knew when it began: the last reading fed (nullopt: none)
    // and where it sampled the hardware.
    struct ReadOrder {
        std::optional<std::uint64_t> since;
        ReadSpan span;
    };
    // Feeds `raw` unless a reading fed already sampled the hardware after it
    // (nullopt order: recorded by the caller, always fed as the newest).
    Joules feed(std::uint64_t raw, std::optional<ReadOrder> order, Clock::time_point finished);
    [[nodiscard]] bool overtaken(std::uint64_t raw, const ReadOrder& order) const;
    // How far the counter moved forwards from `from` to `to`: modulo the
    // range; on a counter that never wraps, a decrease is "further than any".
    [[nodiscard]] std::uint64_t forward(std::uint64_t from, std::uint64_t to) const;
    [[nodiscard]] std::uint64_t masked(std::uint64_t raw) const;

    CounterAccumulator accumulator_;
    ReadRaw read_raw_;
    std::mutex feed_mutex_;  // orders readings into the accumulator; never held across read_raw_
    std::optional<std::uint64_t> last_fed_raw_;
    std::optional<ReadSpan> last_fed_span_;  // nullopt: none, or recorded at a moment we do not know
    Clock::time_point last_fed_at_{};        // when the last reading fed was finished (never decreases)
    // Drawn by every read() before it reads the hardware and looked at right
    // after: whether one reading was sampled before another follows from the
    // order of these atomic operations alone, however long a reader then
    // waits for feed_mutex_ or loses its core.
    std::atomic<std::uint64_t> read_tickets_{0};
    // last_fed_raw_ for reads to note, without the lock, before they read
    // the hardware: ordered by the atomics, not by clocks, which are not
    // exactly in step across CPUs.
    std::atomic<bool> fed_any_{false};
    std::atomic<std::uint64_t> last_fed_published_{0};
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
