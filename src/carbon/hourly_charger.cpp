#include "carbon/hourly_charger.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace zeus::carbon {

namespace {

using Clock = std::chrono::system_clock;
constexpr double kJoulesPerKwh = 3.6e6;

std::string hour_text(UtcTime hour) { return format_utc(hour); }

// Energy values of one device kind that were measured (a lost device has none).
template <class Map>
std::map<unsigned, double> measured(const Map& values) {
    std::map<unsigned, double> out;
    for (const auto& [index, value] : values) {
        if (!value.lost) out[index] = value.energy.count();
    }
    return out;
}

}  // namespace

HourlyCharger::HourlyCharger(EnergyMonitor& energy, std::string tag, RateSource source, HourlyMonitorOptions options)
    : energy_(energy), tag_(std::move(tag)), source_(std::move(source)), options_(std::move(options)) {
    if (!options_.clock) options_.clock = [] { return Clock::now(); };
    if (options_.poll_interval <= std::chrono::milliseconds::zero()) options_.poll_interval = std::chrono::seconds(30);
    thread_ = std::thread([this] { run(); });
}

HourlyCharger::~HourlyCharger() {
    {
        std::lock_guard lock(thread_mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::lock_guard lock(windows_mutex_);
    for (const auto& [key, window] : windows_) {
        (void)energy_.end_window(window.segment_name, false, true);
        if (!window.main_name.empty()) (void)energy_.end_window(window.main_name, false, true);
    }
}

void HourlyCharger::run() {
    std::unique_lock lock(thread_mutex_);
    while (!stopping_) {
        bool any_open = false;
        {
            std::lock_guard windows_lock(windows_mutex_);
            any_open = !windows_.empty();
        }
        if (!any_open) {
            wake_.wait(lock);
            continue;
        }
        // Just past the next boundary, on the monitor's clock, but not more
        // often than every 50 ms (a virtual clock may stand still before one).
        const auto now = options_.clock();
        const auto to_boundary = std::chrono::duration_cast<std::chrono::milliseconds>(
            hour_floor(now) + std::chrono::hours(1) - now + std::chrono::milliseconds(5));
        const auto wait = std::clamp(to_boundary, std::chrono::milliseconds(50), options_.poll_interval);
        wake_.wait_for(lock, wait);
        if (stopping_) break;
        lock.unlock();
        poll();
        lock.lock();
    }
}

Status HourlyCharger::begin(std::string_view key, bool sync, bool own_total) {
    {
        std::lock_guard lock(windows_mutex_);
        if (windows_.contains(key)) {
            return Error{ErrorCode::InvalidState, fmt::format("measurement window '{}' already exists", key),
                         "end it first, or give this window another name", 0};
        }
        Window window;
        const std::string base = fmt::format("{}{}_{}", EnergyMonitor::kInternalWindowPrefix, tag_, key);
        window.segment_name = base + "_hour";
        if (own_total) {
            window.main_name = base;
            if (auto begun = energy_.begin_window(window.main_name, sync); !begun) return begun;
        }
        window.segment_start = options_.clock();
        if (auto begun = energy_.begin_window(window.segment_name, false); !begun) {
            if (own_total) (void)energy_.end_window(window.main_name, false, true);
            return begun;
        }
        windows_.emplace(std::string(key), std::move(window));
    }
    // Through the thread's mutex: the thread checks for open windows and
    // starts waiting under it, so this wake-up cannot fall between the two.
    {
        std::lock_guard lock(thread_mutex_);
    }
    wake_.notify_all();
    return {};
}

void HourlyCharger::attribute(Window& window, const Measurement& segment, Clock::time_point from,
                              Clock::time_point to) const {
    const auto length = to - from;
    const UtcTime first = hour_floor(from);
    const UtcTime last = hour_floor(to);
    for (UtcTime hour = first; hour <= last; hour += std::chrono::hours(1)) {
        const Clock::time_point begin = std::max<Clock::time_point>(from, hour);
        const Clock::time_point end = std::min<Clock::time_point>(to, hour + std::chrono::hours(1));
        if (end <= begin && first != last) continue;  // ends on a boundary: nothing in the next hour
        const double share = length.count() > 0 ? std::chrono::duration<double>(end - begin) /
                                                      std::chrono::duration<double>(length)
                                                : 1.0;
        Slice& slice = window.slices[hour];
        slice.time += Seconds(std::chrono::duration<double>(end - begin).count());
        for (const auto& [i, j] : measured(segment.gpu_energy)) slice.gpu[i] += j * share;
        for (const auto& [i, j] : measured(segment.cpu_energy)) slice.cpu[i] += j * share;
        for (const auto& [i, j] : measured(segment.dram_energy)) slice.dram[i] += j * share;
    }
    if (first != last) {
        const double before = std::chrono::duration<double>(first + std::chrono::hours(1) - from).count();
        const double after = std::chrono::duration<double>(to - last).count();
        if (std::min(before, after) > 1.0) {
            window.warnings.push_back(fmt::format(
                "no energy reading at the hour boundary between {} and {}: the {:.1f} s around it were split "
                "between the hours in proportion to time",
                hour_text(first), hour_text(last), std::chrono::duration<double>(length).count()));
        }
    }
}

void HourlyCharger::poll() {
    const auto now = options_.clock();
    const UtcTime hour = hour_floor(now);
    bool any_open = false;
    {
        std::lock_guard lock(windows_mutex_);
        any_open = !windows_.empty();
        for (auto& [key, window] : windows_) {
            if (hour_floor(window.segment_start) >= hour) continue;
            auto segment = energy_.end_window(window.segment_name, false);
            const auto at = options_.clock();
            if (segment) {
                attribute(window, *segment, window.segment_start, at);
            } else {
                window.warnings.push_back(fmt::format("the energy up to {} could not be split by hour: {}",
                                                      hour_text(hour), segment.error().describe()));
            }
            window.segment_start = at;
            if (auto begun = energy_.begin_window(window.segment_name, false); !begun) {
                window.warnings.push_back(fmt::format("the hourly split stopped at {}: {}", hour_text(hour),
                                                      begun.error().describe()));
            }
        }
    }
    if (!any_open) return;
    {
        std::lock_guard lock(rates_mutex_);
        if (prefetched_hour_ == hour) return;
    }
    // Fetched while the provider answers, so an outage later costs nothing.
    if (auto rates = source_.lookup({hour})) {
        remember(*rates);
        std::lock_guard lock(rates_mutex_);
        prefetched_hour_ = hour;
    }
}

void HourlyCharger::remember(const std::vector<HourlyRate>& rates) {
    std::lock_guard lock(rates_mutex_);
    for (const auto& rate : rates) known_[rate.hour] = rate;
}

Result<ChargedWindow> HourlyCharger::end(std::string_view key, bool sync, const Measurement* measured) {
    Window window;
    Measurement measurement;
    {
        std::lock_guard lock(windows_mutex_);
        const auto it = windows_.find(key);
        if (it == windows_.end()) {
            return Error{ErrorCode::NotFound, fmt::format("measurement window '{}' does not exist", key),
                         "begin it first with begin_window", 0};
        }
        window = std::move(it->second);
        windows_.erase(it);
        std::optional<Result<Measurement>> main;
        if (!window.main_name.empty()) main = energy_.end_window(window.main_name, sync);
        auto segment = energy_.end_window(window.segment_name, false);
        const auto now = options_.clock();
        if (main && !*main) return main->error();
        if (main) {
            measurement = std::move(*main).value();
        } else if (measured != nullptr) {
            measurement = *measured;
        } else {
            return Error{ErrorCode::InvalidArgument,
                         fmt::format("window '{}' was begun without its own total; end it with the caller's measurement",
                                     key),
                         "use end_hourly_split for windows begun with begin_hourly_split", 0};
        }
        if (segment) {
            attribute(window, *segment, window.segment_start, now);
        } else {
            window.warnings.push_back("the last hour's share could not be measured: " + segment.error().describe());
        }
    }
    return charge(std::move(window), std::move(measurement));
}

std::optional<Error> HourlyCharger::look_up_missing_rates(const std::vector<UtcTime>& hours) {
    bool missing = false;
    {
        std::lock_guard lock(rates_mutex_);
        missing = std::any_of(hours.begin(), hours.end(), [&](UtcTime h) { return !known_.contains(h); });
    }
    if (!missing) return std::nullopt;
    auto rates = source_.lookup(hours);
    if (!rates) return rates.error();
    remember(*rates);
    return std::nullopt;
}

std::optional<HourlyRate> HourlyCharger::nearest_known_rate(UtcTime hour) const {
    for (int d = 1; d <= options_.max_gap_hours; ++d) {
        for (const auto candidate : {hour - std::chrono::hours(d), hour + std::chrono::hours(d)}) {
            if (const auto it = known_.find(candidate); it != known_.end()) return it->second;
        }
    }
    return std::nullopt;
}

std::map<UtcTime, HourCharge> HourlyCharger::rate_hours(const std::vector<UtcTime>& hours,
                                                        const std::optional<Error>& provider_error,
                                                        const std::string& provider,
                                                        std::vector<std::string>& without_value) {
    std::map<UtcTime, HourCharge> charges;
    std::lock_guard lock(rates_mutex_);
    for (const UtcTime hour : hours) {
        HourCharge& c = charges[hour];
        c.hour = hour;
        if (const auto it = known_.find(hour); it != known_.end()) {
            c.rate = it->second;
            continue;
        }
        const std::optional<HourlyRate> nearest = nearest_known_rate(hour);
        const std::string why = provider_error
                                    ? provider_error->describe()
                                    : fmt::format("{} has no {} for {}", provider, source_.what, hour_text(hour));
        if (nearest) {
            c.rate = HourlyRate{hour, nearest->per_kwh, nearest->data_time, nearest->estimated};
            c.fallback = true;
            c.fallback_reason =
                fmt::format("{}; used the value of {} ({} per kWh)", why, hour_text(nearest->hour), nearest->per_kwh);
        } else if (options_.fallback_per_kwh) {
            c.rate = HourlyRate{hour, *options_.fallback_per_kwh, hour, false};
            c.fallback = true;
            c.fallback_reason = fmt::format("{}; used the configured fallback {} per kWh for {}", why,
                                            *options_.fallback_per_kwh, hour_text(hour));
        } else {
            without_value.push_back(hour_text(hour));
        }
    }
    return charges;
}

// The window's own energy is the total; the segments only say how it divides
// between hours (time shares when they measured nothing), so the hours add up
// to it exactly.
std::map<unsigned, double> HourlyCharger::split_by_hour(const Window& window, const std::vector<UtcTime>& hours,
                                                        const std::map<unsigned, double>& energies,
                                                        std::map<unsigned, double> Slice::*member,
                                                        std::map<UtcTime, HourCharge>& charges) {
    double total_time = 0;
    for (const auto& [hour, slice] : window.slices) total_time += slice.time.count();
    std::map<unsigned, double> amounts;
    for (const auto& [index, joules] : energies) {
        double weight_sum = 0;
        for (const auto& [hour, slice] : window.slices) {
            const auto& m = slice.*member;
            if (const auto it = m.find(index); it != m.end()) weight_sum += it->second;
        }
        double amount = 0;
        for (const UtcTime hour : hours) {
            double share = 1.0;
            if (const auto s = window.slices.find(hour); s != window.slices.end()) {
                const auto& m = s->second.*member;
                const auto it = m.find(index);
                if (weight_sum > 0) {
                    share = it != m.end() ? it->second / weight_sum : 0.0;
                } else if (total_time > 0) {
                    share = s->second.time.count() / total_time;
                } else {
                    share = 1.0 / static_cast<double>(hours.size());
                }
            }
            HourCharge& c = charges[hour];
            c.energy += Joules(joules * share);
            if (c.rate) amount += joules * share / kJoulesPerKwh * c.rate->per_kwh;
        }
        amounts[index] = amount;
    }
    return amounts;
}

ChargedWindow HourlyCharger::charge(Window window, Measurement measurement) {
    ChargedWindow out;
    out.provenance = source_.describe();
    out.provenance.warnings = std::move(window.warnings);
    std::vector<UtcTime> hours;
    for (const auto& [hour, slice] : window.slices) hours.push_back(hour);
    if (hours.empty()) hours.push_back(hour_floor(measurement.start_time));

    // Rates: what is known already, else ask the provider for the window's hours.
    const std::optional<Error> provider_error = look_up_missing_rates(hours);
    std::vector<std::string> without_value;
    std::map<UtcTime, HourCharge> charges = rate_hours(hours, provider_error, out.provenance.provider, without_value);
    if (!without_value.empty()) {
        out.provenance.unavailable_reason =
            provider_error ? fmt::format("{} unavailable: {}", source_.what, provider_error->describe())
                           : fmt::format("{} has no {} for {} (zone {})", out.provenance.provider, source_.what,
                                         fmt::join(without_value, ", "), out.provenance.zone);
    }

    // Each device's energy, split by hour.
    auto gpu = split_by_hour(window, hours, measured(measurement.gpu_energy), &Slice::gpu, charges);
    auto cpu = split_by_hour(window, hours, measured(measurement.cpu_energy), &Slice::cpu, charges);
    auto dram = split_by_hour(window, hours, measured(measurement.dram_energy), &Slice::dram, charges);

    // The slices' times come from this charger's clock, read beside the monitor's edges, not at
    // them: scaled to the window's own time, so the hours add up to it exactly, as their energies
    // add up to its joules.
    double sliced = 0;
    for (const auto& [hour, slice] : window.slices) sliced += slice.time.count();
    const double time_scale = sliced > 0 ? measurement.time.count() / sliced : 0.0;
    for (auto& [hour, c] : charges) {
        if (const auto s = window.slices.find(hour); s != window.slices.end()) {
            c.time = Seconds(s->second.time.count() * time_scale);
        } else if (window.slices.empty()) {
            c.time = measurement.time;
        }
        if (c.rate) c.amount = c.energy.count() / kJoulesPerKwh * c.rate->per_kwh;
        if (c.fallback) {
            out.provenance.fallback_used = true;
            out.provenance.warnings.push_back(c.fallback_reason);
        }
        if (c.rate && c.rate->estimated) out.provenance.estimated = true;
        out.provenance.hours.push_back(c);
    }
    if (out.provenance.available()) {
        double total = 0;
        for (const auto* part : {&gpu, &cpu, &dram}) {
            for (const auto& [index, amount] : *part) total += amount;
        }
        out.gpu = std::move(gpu);
        out.cpu = std::move(cpu);
        out.dram = std::move(dram);
        out.total = total;
    } else {
        out.provenance.warnings.push_back(out.provenance.unavailable_reason +
                                          " -- the energy is measured, its " + source_.what + " amount is not");
    }
    out.measurement = std::move(measurement);
    return out;
}

}  // namespace zeus::carbon
