#include "zeus/device/counter_sampler.hpp"

#include <algorithm>
#include <limits>

namespace zeus {

AccumulatedCounter::AccumulatedCounter(CounterSpec spec, ReadRaw read_raw)
    : accumulator_(std::move(spec)), read_raw_(std::move(read_raw)) {}

Result<Joules> AccumulatedCounter::read() {
    const ReadTicket drawn = ticket();
    auto raw = read_raw_();
    if (!raw) return raw.error();
    return record(*raw, drawn);
}

AccumulatedCounter::ReadTicket AccumulatedCounter::ticket() {
    ReadTicket drawn;
    if (fed_any_.load()) drawn.since = last_fed_published_.load();
    drawn.total_then = total_published_.load();
    drawn.began = read_tickets_.fetch_add(1);
    return drawn;
}

Joules AccumulatedCounter::record(std::uint64_t raw, const ReadTicket& ticket) {
    // Seen after the hardware was read: a caller that records later than
    // right after its read only widens its span, which makes the order of
    // tickets decide less often, never wrongly.
    const ReadOrder order{ticket, ReadSpan{ticket.began, read_tickets_.load()}};
    return feed(raw, order, Clock::now());
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

bool AccumulatedCounter::overtaken(std::uint64_t raw, const ReadOrder& order) const {
    if (!last_fed_raw_) return false;
    // The last reading fed began after this one had sampled: it is newer
    // (this reader waited, or lost its core, between its read and here).
    if (order.span.ended <= last_fed_span_.began) return true;
    // It had sampled before this one began: this one is newer.
    if (order.span.began >= last_fed_span_.ended) return false;
    // The two reads overlapped: if this reading lies between `since` and the
    // last reading fed, that one sampled later. Exact while the counter moves
    // less than a lap during one read. A reading behind `since` itself is a
    // real step backwards and is fed (and counted).
    const auto& since = order.ticket.since;
    return since && forward(*since, raw) < forward(*since, *last_fed_raw_);
}

Joules AccumulatedCounter::total_as_of(std::uint64_t raw, const ReadTicket& ticket) const {
    // The counter moved from `raw` to the last reading fed: the total less
    // that. It lies between the total when this reading's ticket was drawn
    // and the total now; a move beyond those (a restart in between, more
    // than a lap on a wrapping counter) says nothing exact, and the bound
    // holds.
    const std::uint64_t behind = forward(raw, *last_fed_raw_);
    const std::uint64_t total = accumulator_.total_counts();
    const std::uint64_t as_of = behind <= total - ticket.total_then ? total - behind : ticket.total_then;
    return Joules(static_cast<double>(as_of) * accumulator_.spec().joules_per_count);
}

Joules AccumulatedCounter::feed(std::uint64_t raw, const ReadOrder& order, Clock::time_point finished) {
    raw = masked(raw);
    std::lock_guard lock(feed_mutex_);
    // A reading that a newer one fed already overtook adds nothing, and
    // feeding it would look like a step backwards (on a counter that never
    // wraps: a restart, which adds the counter's whole value) or, across a
    // wrap, a whole lap forwards.
    if (overtaken(raw, order)) return total_as_of(raw, order.ticket);
    const auto when = std::max(finished, last_fed_at_);
    accumulator_.update(raw, when);
    last_fed_raw_ = raw;
    last_fed_span_ = order.span;
    last_fed_at_ = when;
    last_fed_published_.store(raw);
    total_published_.store(accumulator_.total_counts());
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
