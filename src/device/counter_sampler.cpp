#include "zeus/device/counter_sampler.hpp"

#include <algorithm>

namespace zeus {

AccumulatedCounter::AccumulatedCounter(CounterSpec spec, ReadRaw read_raw)
    : accumulator_(std::move(spec)), read_raw_(std::move(read_raw)) {}

Result<Joules> AccumulatedCounter::read() {
    std::lock_guard lock(read_mutex_);
    auto raw = read_raw_();
    if (!raw) return raw.error();
    accumulator_.update(*raw, CounterAccumulator::Clock::now());
    return accumulator_.total();
}

Joules AccumulatedCounter::record(std::uint64_t raw) {
    std::lock_guard lock(read_mutex_);
    accumulator_.update(raw, CounterAccumulator::Clock::now());
    return accumulator_.total();
}

namespace {

std::chrono::nanoseconds choose_period(const std::vector<std::shared_ptr<AccumulatedCounter>>& counters,
                                       std::optional<std::chrono::nanoseconds> requested) {
    using namespace std::chrono_literals;
    std::chrono::nanoseconds period = requested.value_or(60s);
    if (!requested) {
        for (const auto& c : counters) {
            if (auto interval = c->accumulator().max_read_interval()) {
                period = std::min(period, std::chrono::duration_cast<std::chrono::nanoseconds>(*interval));
            }
        }
    }
    return std::clamp<std::chrono::nanoseconds>(period, 1ms, 60s);
}

}  // namespace

CounterSampler::CounterSampler(std::vector<std::shared_ptr<AccumulatedCounter>> counters,
                               std::optional<std::chrono::nanoseconds> period)
    : counters_(std::move(counters)), period_(choose_period(counters_, period)) {
    for (auto& c : counters_) (void)c->read();  // baseline before anyone measures
    thread_ = std::thread([this] { run(); });
}

CounterSampler::~CounterSampler() { stop(); }

void CounterSampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void CounterSampler::run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stopping_; })) {
        lock.unlock();
        for (auto& c : counters_) (void)c->read();  // errors surface on the user's own reads
        lock.lock();
    }
}

}  // namespace zeus
