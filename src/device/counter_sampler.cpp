#include "zeus/device/counter_sampler.hpp"

#include <algorithm>
#include <limits>

namespace zeus {

AccumulatedCounter::AccumulatedCounter(CounterSpec spec, ReadRaw read_raw)
    : accumulator_(std::move(spec)), read_raw_(std::move(read_raw)) {}

Result<Joules> AccumulatedCounter::read() {
    std::optional<std::uint64_t> since;
    if (fed_any_.load()) since = last_fed_published_.load();
    auto raw = read_raw_();
    const auto finished = Clock::now();
    if (!raw) return raw.error();
    return feed(*raw, since, finished);
}

Joules AccumulatedCounter::record(std::uint64_t raw) {
    // Read by the caller at a moment we do not know: fed as the newest
    // reading, as it always was.
    return feed(raw, std::nullopt, Clock::now());
}

std::uint64_t AccumulatedCounter::masked(std::uint64_t raw) const {
    const std::uint64_t range = accumulator_.spec().range;
    return range == 0 ? raw : raw % range;
}

std::uint64_t AccumulatedCounter::forward(std::uint64_t from, std::uint64_t to) const {
    const std::uint64_t range = accumulator_.spec().range;
    if (range == 0) return to >= from ? to - from : std::numeric_limits<std::uint64_t>::max();
    return (to + range - from) % range;
}

Joules AccumulatedCounter::feed(std::uint64_t raw, std::optional<std::uint64_t> since, Clock::time_point finished) {
    raw = masked(raw);
    std::lock_guard lock(feed_mutex_);
    // This read sampled the hardware after `since` was sampled. If it lies
    // between `since` and the last reading fed, that reading (fed while this
    // one read) sampled later: feeding this one would look like a step
    // backwards (or, across a wrap, a whole lap forwards), and it adds
    // nothing the newer one did not. Exact while the counter moves less than
    // a lap between reads fed, which the accumulator needs anyway. A reading
    // behind `since` itself is a real step backwards and is fed (and counted).
    if (since && last_fed_raw_ && forward(*since, raw) < forward(*since, *last_fed_raw_)) {
        return accumulator_.total();
    }
    const auto when = std::max(finished, last_fed_at_);
    accumulator_.update(raw, when);
    last_fed_raw_ = raw;
    last_fed_at_ = when;
    last_fed_published_.store(raw);
    fed_any_.store(true);
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
