#include "monitor/counter_edges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace zeus::monitor_detail {

EdgeEstimate energy_at(const EnergySnapshot& s, std::optional<SystemClock::time_point> now, Watts ceiling,
                       SystemClock::duration max_age) {
    EdgeEstimate edge{quantity_cast<Joules>(s.energy)};
    if (now && s.refreshed_at && s.power) {
        const auto age = *now - *s.refreshed_at;
        if (age > SystemClock::duration::zero() && age < max_age) {
            const Watts power = quantity_cast<Watts>(*s.power);
            edge.energy += power * age;
            edge.error_bound = std::max(power, std::max(ceiling, power) - power) * age;
        }
    }
    return edge;
}

std::string short_window_warning(Seconds length) {
    static const std::string kSuffix = fmt::format(
        " ms) is shorter than the energy counter's update period (~{} ms): the value may be 0 or off by up to "
        "one period's energy",
        kCounterUpdatePeriod.count());
    std::array<char, 32> ms{};
    const auto [end, ec] = std::to_chars(ms.data(), ms.data() + ms.size(), length.count() * 1e3,
                                         std::chars_format::fixed, 1);
    std::string text;
    text.reserve(12 + 32 + kSuffix.size());
    text.append("the window (");
    if (ec == std::errc()) text.append(ms.data(), end);
    text.append(kSuffix);
    return text;
}

EnergyValue lost_value(EnergySource source, std::string warning) {
    return EnergyValue{Joules(0.0), source, {std::move(warning)}, true};
}

CounterWatch::GpuView watched_at(CounterWatch::GpuView view, const EnergySnapshot& snapshot, Timestamp now) {
    if (view.stuck_since && now > view.read_at) {
        const Watts power_now = snapshot.power ? quantity_cast<Watts>(*snapshot.power) : view.power;
        view.compensation += (view.power + power_now) * 0.5 * (now - view.read_at);
    }
    return view;
}

Result<EnergySnapshot> counter_or_stand_in(Result<EnergySnapshot> snapshot, CounterWatch::GpuView& watched) {
    if (snapshot || snapshot.error().code != ErrorCode::NotSupported || !watched.counter) return snapshot;
    if (!watched.stuck_since) {
        // Refused since the watch's last read, which it has not seen yet: the
        // counter then lagged the truth by `lag`, the power since follows.
        watched.stuck_since = watched.read_at;
        watched.compensation += watched.lag;
    }
    if (!watched.refused) watched.refused = snapshot.error().describe();
    return EnergySnapshot{*watched.counter, std::nullopt, std::nullopt};
}

EnergyValue counter_difference(const CounterEdge& begin, const EdgeEstimate& end,
                               const CounterWatch::GpuView& watched) {
    EnergyValue value{
        counter_difference_energy(begin.energy, end.energy, begin.watched.compensation, watched.compensation),
        EnergySource::HardwareCounter,
        {}};
    if (const Joules bound = end.error_bound + begin.error_bound; bound > Joules(0.0)) value.edge_error_bound = bound;
    return value;
}

Joules counter_difference_energy(Joules begin, Joules end, Joules begin_compensation, Joules end_compensation) {
    Joules energy = end - begin + (end_compensation - begin_compensation);
    if (energy.count() < 0) energy = Joules(0.0);
    return energy;
}

void note_counter_history(EnergyValue& value, unsigned gpu, const CounterEdge& begin,
                          const CounterWatch::GpuView& watched, const std::optional<CounterStats>& end_stats,
                          Timestamp end) {
    if (begin.stats && end_stats) {
        if (end_stats->resets != begin.stats->resets) {
            value.warnings.push_back(
                watched.restarts_covered - begin.watched.restarts_covered >= end_stats->resets - begin.stats->resets
                    ? "the GPU's energy counter restarted during the window (driver reload?): the energy it lost "
                      "between its last read and the restart is integrated instant power"
                    : "the GPU's energy counter restarted during the window (driver reload?): energy may be "
                      "underestimated");
        }
        if (end_stats->backward_glitches != begin.stats->backward_glitches ||
            end_stats->jump_glitches != begin.stats->jump_glitches) {
            value.warnings.push_back("the GPU's energy counter glitched during the window; the glitch was ignored");
        }
    }
    if (const auto outages = watched.outages - begin.watched.outages; outages > 0) {
        value.warnings.push_back(fmt::format(
            "GPU {} stopped answering {} during the window (the longest outage lasted about {:.1f} s; a lost GPU?) "
            "and came back; its energy is its counter's, which kept counting",
            gpu, outages == 1 ? std::string("once") : fmt::format("{} times", outages),
            Seconds(watched.longest_outage).count()));
    }
    if (watched.stuck_since && watched.refused) {
        value.source = EnergySource::IntegratedPower;
        value.warnings.push_back(fmt::format(
            "the GPU's energy counter stopped answering {:.1f} s before the window ended while the GPU still "
            "reported its power ({}); the energy since then is integrated instant power",
            Seconds(end - *watched.stuck_since).count(), *watched.refused));
    } else if (watched.stuck_since) {
        value.source = EnergySource::IntegratedPower;
        value.warnings.push_back(fmt::format(
            "the GPU's energy counter stopped {:.1f} s before the window ended while the GPU drew power; the energy "
            "since then is integrated instant power",
            Seconds(end - *watched.stuck_since).count()));
    }
}

void note_impossible_power(EnergyValue& value, unsigned gpu, Watts ceiling, Seconds time) {
    if (ceiling <= Watts(0.0) || time <= Seconds(0.0) || value.lost) return;
    const Joules allowed = ceiling * 1.1 * time + ceiling * kCounterUpdatePeriod;
    if (value.energy <= allowed) return;
    value.warnings.push_back(fmt::format(
        "GPU {}'s average power over the window ({:.0f} W) is above its highest power limit ({:.0f} W), which no "
        "GPU sustains: its energy counter or a clock is wrong (a wall-clock step?), so the value is not to be "
        "trusted",
        gpu, (value.energy / time).count(), ceiling.count()));
}

void mark_zeros(std::map<unsigned, EnergyValue>& values, bool approx_instant_energy,
                const std::map<unsigned, Watts>& instant, Seconds time) {
    for (auto& [i, value] : values) {
        if (value.energy.count() != 0.0 || value.lost) continue;
        const auto power = instant.find(i);
        if (approx_instant_energy && power != instant.end()) {
            value.energy = power->second * time;
            value.source = EnergySource::InstantPowerApproximation;
            value.warnings.push_back("approximated as instant power × window length");
        } else {
            value.warnings.push_back(
                "measured as zero: the window is probably shorter than the counter's update period; consider "
                "approx_instant_energy");
        }
    }
}

}  // namespace zeus::monitor_detail
