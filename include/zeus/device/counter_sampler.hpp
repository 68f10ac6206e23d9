// A raw hardware counter bound to its accumulator, and a background reader
// that reads a set of them often enough never to miss a wrap, without the
// user doing anything. The reader is a thread owned by the sampler and joined
// when it is destroyed: no helper processes, nothing left behind by a fork.
#pragma once

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

    AccumulatedCounter(CounterSpec spec, ReadRaw read_raw);

    // Reads the hardware now and returns the accumulated total. Reads from
    // several threads are serialised so the accumulator sees them in order.
    [[nodiscard]] Result<Joules> read();
    // Feeds a raw value the caller read itself (e.g. together with other
    // fields in one device call), in order with read(). Returns the total.
    Joules record(std::uint64_t raw);
    [[nodiscard]] CounterStats stats() const { return accumulator_.stats(); }
    [[nodiscard]] const CounterAccumulator& accumulator() const { return accumulator_; }

  private:
    CounterAccumulator accumulator_;
    ReadRaw read_raw_;
    std::mutex read_mutex_;
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
