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
// (energy_monitor.cpp): power × time since its refresh, up to a second.
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

void CounterWatch::observe(unsigned i, const Result<EnergySnapshot>& snapshot) {
    const Gpu& gpu = gpus_[i];
    const Timestamp now = MonitorClock::now();
    if (!snapshot) {
        // A GPU lost at a window's end is the window's to report; one
        // that comes back is counted below.
        std::lock_guard lock(mutex_);
        State& s = states_[i];
        if (!s.unanswered_since) s.unanswered_since = now;
        return;
    }
    const auto read_wall = std::chrono::system_clock::now();
    Watts power{0.0};
    if (snapshot->power) {
        power = quantity_cast<Watts>(*snapshot->power);
    } else if (auto p = gpu.instant_power()) {
        power = quantity_cast<Watts>(p->power);
    }
    const auto stats = gpu.energy_counter_stats();
    const std::uint64_t resets = stats ? stats->resets : 0;
    const Joules counter = quantity_cast<Joules>(snapshot->energy);
    Joules lag{0.0};
    if (snapshot->refreshed_at) {
        const auto age = read_wall - *snapshot->refreshed_at;
        if (age > std::chrono::system_clock::duration::zero() && age < kMaxRefreshAge) lag = power * age;
    }

    std::lock_guard lock(mutex_);
    State& s = states_[i];
    if (s.unanswered_since) {
        ++s.view.outages;
        s.view.longest_outage = std::max(s.view.longest_outage, now - *s.unanswered_since);
        s.unanswered_since.reset();
    }
    if (!s.have_read) {
        const GpuView kept = s.view;  // outages before the first good read
        s = State{};
        s.view.outages = kept.outages;
        s.view.longest_outage = kept.longest_outage;
        s.have_read = true;
        s.counter_moved_at = now;
        s.lag_at_move = lag;
        s.resets = resets;
        s.remember_read(counter, power, now);
        return;
    }
    // Readings in between are unknown: the mean of the two ends.
    const Joules drawn = (s.power + power) * 0.5 * (now - s.read_at);
    const Joules counted = counter - s.counter;
    if (resets > s.resets) {
        // Restarted since the last read: what it counted is what it drew
        // since the restart; the rest of the period is lost to it.
        s.view.compensation += std::max(Joules(0.0), drawn - counted);
        s.view.restarts_covered += resets - s.resets;
        s.resets = resets;
        s.counter_moved_at = now;
        s.lag_at_move = lag;
        s.power_since_move = Joules(0.0);
    } else if (counted > Joules(0.0)) {
        if (s.view.stuck_since) {
            // Moving again: if it caught up with what it missed, the
            // stand-in energy would count that twice.
            if (counted >= s.stuck_compensation * 0.5) s.view.compensation -= s.stuck_compensation;
            s.view.stuck_since.reset();
            s.stuck_compensation = Joules(0.0);
        }
        s.counter_moved_at = now;
        s.lag_at_move = lag;
        s.power_since_move = Joules(0.0);
    } else {
        s.power_since_move += drawn;
        if (s.view.stuck_since) {
            s.view.compensation += drawn;
            s.stuck_compensation += drawn;
        } else if (now - s.counter_moved_at >= kStuckAfter && s.power_since_move >= kStuckEnergy) {
            // Stopped at its last refresh before the last move: the
            // windows' interpolation covered up to that read.
            s.view.stuck_since = s.counter_moved_at;
            const Joules missed = s.lag_at_move + s.power_since_move;
            s.view.compensation += missed;
            s.stuck_compensation = missed;
        }
    }
    s.remember_read(counter, power, now);
}

}  // namespace zeus::monitor_detail
