#include "monitor/counter_watch.hpp"

#include <algorithm>

namespace zeus::monitor_detail {
namespace {

using namespace std::chrono_literals;

// A healthy counter refreshes about every 100 ms: one that has not moved for
// five refreshes while the power integrates to more than its resolution
// many times over has stopped.
constexpr auto kStuckAfter = 500ms;
constexpr Joules kStuckEnergy{0.5};
// The counter's lag behind a read, as the windows interpolate it
// (counter_edges.cpp): power × time since its refresh, up to a second.
constexpr auto kMaxRefreshAge = 1s;

}  // namespace

CounterWatch::CounterWatch(const Gpus& gpus, std::vector<unsigned> gpu_indices, std::chrono::nanoseconds period)
    : gpus_(gpus), indices_(std::move(gpu_indices)), period_(period) {
    for (unsigned i : indices_) states_[i];
}

void CounterWatch::start() {
    if (period_.count() == 0 || started_.load(std::memory_order_acquire)) return;
    {
        std::lock_guard lock(mutex_);
        if (started_.exchange(true)) return;
    }
    thread_.start(period_, [this] { sweep(); });
}

CounterWatch::GpuView CounterWatch::view(unsigned gpu) const {
    std::lock_guard lock(mutex_);
    auto it = states_.find(gpu);
    return it == states_.end() ? GpuView{} : it->second.view;
}

void CounterWatch::sweep() {
    for (unsigned i : indices_) observe(i, gpus_[i].energy_snapshot());
}

// One good read: the counter, the power (the snapshot's, or an instant
// reading), the counter's restarts so far and its lag behind the read.
CounterWatch::Reading CounterWatch::reading_of(unsigned i, const EnergySnapshot& snapshot) const {
    const Gpu& gpu = gpus_[i];
    const auto read_wall = std::chrono::system_clock::now();
    Reading r;
    if (snapshot.power) {
        r.power = quantity_cast<Watts>(*snapshot.power);
    } else if (auto p = gpu.instant_power()) {
        r.power = quantity_cast<Watts>(p->power);
    }
    const auto stats = gpu.energy_counter_stats();
    r.resets = stats ? stats->resets : 0;
    r.counter = quantity_cast<Joules>(snapshot.energy);
    if (snapshot.refreshed_at) {
        const auto age = read_wall - *snapshot.refreshed_at;
        if (age > std::chrono::system_clock::duration::zero() && age < kMaxRefreshAge) r.lag = r.power * age;
    }
    return r;
}

void CounterWatch::observe(unsigned i, const Result<EnergySnapshot>& snapshot) {
    const Timestamp now = MonitorClock::now();
    if (!snapshot) {
        // A counter that refuses while the power still answers: the power
        // is integrated instead, as for a stuck counter.
        if (snapshot.error().code == ErrorCode::NotSupported) {
            if (auto power = gpus_[i].instant_power()) {
                counter_refused(i, now, quantity_cast<Watts>(power->power), snapshot.error().describe());
                return;
            }
        }
        // A GPU lost at a window's end is the window's to report; one
        // that comes back is counted below.
        std::lock_guard lock(mutex_);
        State& s = states_[i];
        if (!s.unanswered_since) s.unanswered_since = now;
        return;
    }
    const Reading r = reading_of(i, *snapshot);
    std::lock_guard lock(mutex_);
    State& s = states_[i];
    s.note_answered(now);
    if (!s.have_read) {
        s.first_read(r, now);
        s.keep_good_read(snapshot->energy, r.lag);
        return;
    }
    // Readings in between are unknown: the mean of the two ends.
    const Joules drawn = (s.power + r.power) * 0.5 * (now - s.read_at);
    const Joules counted = r.counter - s.counter;
    if (r.resets > s.resets) {
        s.restarted(r, now, drawn - counted);
    } else if (counted > Joules(0.0)) {
        s.moved(r, now, counted);
    } else {
        s.stood_still(now, drawn);
    }
    s.remember_read(r.counter, r.power, now);
    s.keep_good_read(snapshot->energy, r.lag);
}

void CounterWatch::counter_refused(unsigned i, Timestamp now, Watts power, std::string why) {
    std::lock_guard lock(mutex_);
    State& s = states_[i];
    s.note_answered(now);
    if (!s.have_read) return;  // never read: nothing to stand in for, the window reports it
    s.stood_still(now, (s.power + power) * 0.5 * (now - s.read_at), /*stopped=*/true);
    s.view.refused = std::move(why);
    s.remember_read(s.counter, power, now);
}

void CounterWatch::State::note_answered(Timestamp now) {
    if (!unanswered_since) return;
    ++view.outages;
    view.longest_outage = std::max(view.longest_outage, now - *unanswered_since);
    unanswered_since.reset();
}

void CounterWatch::State::first_read(const Reading& r, Timestamp now) {
    const GpuView kept = view;  // outages before the first good read
    *this = State{};
    view.outages = kept.outages;
    view.longest_outage = kept.longest_outage;
    have_read = true;
    counter_moved_at = now;
    lag_at_move = r.lag;
    resets = r.resets;
    remember_read(r.counter, r.power, now);
}

// Restarted since the last read: what it counted is what it drew since the
// restart; the rest of the period (`uncounted`) is lost to it.
void CounterWatch::State::restarted(const Reading& r, Timestamp now, Joules uncounted) {
    view.compensation += std::max(Joules(0.0), uncounted);
    view.restarts_covered += r.resets - resets;
    resets = r.resets;
    counter_moved_at = now;
    lag_at_move = r.lag;
    power_since_move = Joules(0.0);
}

void CounterWatch::State::moved(const Reading& r, Timestamp now, Joules counted) {
    if (view.stuck_since) {
        // Moving again: if it caught up with what it missed, the stand-in
        // energy would count that twice.
        if (counted >= stuck_compensation * 0.5) view.compensation -= stuck_compensation;
        view.stuck_since.reset();
        stuck_compensation = Joules(0.0);
    }
    counter_moved_at = now;
    lag_at_move = r.lag;
    power_since_move = Joules(0.0);
}

void CounterWatch::State::stood_still(Timestamp now, Joules drawn, bool stopped) {
    power_since_move += drawn;
    if (view.stuck_since) {
        view.compensation += drawn;
        stuck_compensation += drawn;
    } else if (stopped || (now - counter_moved_at >= kStuckAfter && power_since_move >= kStuckEnergy)) {
        // Stopped at its last refresh before the last move: the windows'
        // interpolation covered up to that read.
        view.stuck_since = counter_moved_at;
        const Joules missed = lag_at_move + power_since_move;
        view.compensation += missed;
        stuck_compensation = missed;
    }
}

}  // namespace zeus::monitor_detail
