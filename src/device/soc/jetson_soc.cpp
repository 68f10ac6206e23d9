// JetsonSoc: each INA3221 rail is a PowerIntegrator whose running total is
// exposed as a monotonic µJ counter (an AccumulatedCounter), so one
// CounterSampler thread, owned by the SoC, samples every rail each period and
// a user's total_energy() samples them once more, up to the moment of the call.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <mutex>

#include "device/soc/ina3221_rails.hpp"
#include "device/soc/power_integrator.hpp"
#include "zeus/device/counter_sampler.hpp"
#include "zeus/device/soc.hpp"

namespace zeus {
namespace {

using Clock = std::chrono::steady_clock;

// No Jetson board draws near this (AGX Thor: ~130 W); a sample implying more
// is a glitch that the counter's filter drops instead of counting.
constexpr Watts kMaxRailPower{1000.0};
constexpr double kMicrojoulesPerJoule = 1e6;

struct RailState {
    mutable std::mutex mutex;
    soc::PowerIntegrator integrator;
    Status status;
    std::uint64_t failed_reads = 0;
};

struct Rail {
    soc::RailSource source;
    std::shared_ptr<RailState> state = std::make_shared<RailState>();
    std::shared_ptr<AccumulatedCounter> counter;  // null when the rail has no value files
};

// One power sample integrated; the total in µJ as the counter's raw value.
Result<std::uint64_t> sample(const soc::RailSource& source, RailState& state) {
    const auto before = Clock::now();
    auto power = soc::read_power(source);
    const auto after = Clock::now();
    std::lock_guard lock(state.mutex);
    if (!power) {
        ++state.failed_reads;
        state.status = power.error();
        return power.error();
    }
    state.status = Status{};
    const Joules total = state.integrator.add(*power, before + (after - before) / 2);
    return static_cast<std::uint64_t>(std::floor(total.count() * kMicrojoulesPerJoule));
}

Error with_rail(const Error& e, std::string_view rail) {
    Error out = e;
    out.message = fmt::format("rail {}: {}", rail, e.message);
    return out;
}

std::string_view pattern_of(SocMetric metric) {
    switch (metric) {
        case SocMetric::Cpu: return "\"cpu\"";
        case SocMetric::Gpu: return "\"gpu\"";
        case SocMetric::Total: return "\"system\", \"_in\" or \"total\"";
    }
    return "";
}

}  // namespace

struct JetsonSoc::Impl {
    Clock::time_point opened = Clock::now();
    std::vector<Rail> rails;
    Status status;
    std::unique_ptr<CounterSampler> sampler;  // stopped and joined first, in ~JetsonSoc

    // From the rails' latest readings, so a rail that recovers is supported again.
    [[nodiscard]] std::vector<SocMetricInfo> describe_metrics() const {
        std::vector<SocMetricInfo> metrics;
        std::vector<std::string> names;
        for (const auto& r : rails) names.push_back(r.source.name);
        for (SocMetric m : kSocMetrics) {
            SocMetricInfo info{m, Capability::yes(), {}};
            for (const auto& r : rails) {
                if (r.source.metric != m) continue;
                info.rails.push_back(r.source.name);
                if (!info.support.supported) continue;
                if (r.source.problem) {
                    info.support = Capability::no(with_rail(*r.source.problem, r.source.name).describe());
                } else if (std::lock_guard lock(r.state->mutex); !r.state->status.ok()) {
                    // The latest reading failed; reads keep trying, so this may pass.
                    info.support = Capability::unknown(with_rail(r.state->status.error(), r.source.name).describe());
                }
            }
            if (info.rails.empty()) {
                info.support = Capability::no(fmt::format(
                    "no INA3221 rail has a name containing {} (rails: {})", pattern_of(m),
                    names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
            }
            metrics.push_back(std::move(info));
        }
        return metrics;
    }

    void describe_status() {
        std::optional<Error> first;
        for (const auto& r : rails) {
            if (r.source.problem) {
                if (!first) first = with_rail(*r.source.problem, r.source.name);
                continue;
            }
            std::lock_guard lock(r.state->mutex);
            if (r.state->status.ok()) return;  // at least one rail reads: the SoC is usable
            if (!first) first = with_rail(r.state->status.error(), r.source.name);
        }
        Error e = first.value_or(Error{ErrorCode::NotFound, "no rails", {}, 0});
        e.message = fmt::format("none of the {} INA3221 rails could be read; first: {}", rails.size(), e.message);
        status = e;
    }
};

JetsonSoc::JetsonSoc(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

void JetsonSoc::stop_sampling() {
    if (impl_ && impl_->sampler) impl_->sampler->stop();
}

JetsonSoc::~JetsonSoc() {
    if (impl_) impl_->sampler.reset();  // join the thread before the rails it reads go
}

Result<std::unique_ptr<JetsonSoc>> JetsonSoc::open(const std::string& sysfs_root,
                                                   std::chrono::milliseconds sample_period) {
    std::vector<std::string> searched;
    auto sources = soc::discover_rails(sysfs_root, &searched);
    if (sources.empty()) {
        return Error{ErrorCode::NotFound,
                     fmt::format("no INA3221 power monitor rails under {}", fmt::join(searched, " or ")),
                     "check that the ina3221 driver is bound (`ls /sys/bus/i2c/drivers`); in a container, mount "
                     "the host's /sys read-only and point ZEUS_JETSON_SYSFS_ROOT at it",
                     0};
    }
    auto impl = std::make_unique<Impl>();
    std::vector<std::shared_ptr<AccumulatedCounter>> counters;
    for (auto& source : sources) {
        Rail rail;
        rail.source = std::move(source);
        if (rail.source.problem) {
            rail.state->status = *rail.source.problem;
        } else {
            CounterSpec spec{fmt::format("Jetson rail {} ({})", rail.source.name, rail.source.dir.string()), 0,
                             1.0 / kMicrojoulesPerJoule, kMaxRailPower};
            rail.counter = std::make_shared<AccumulatedCounter>(
                std::move(spec), [src = rail.source, state = rail.state] { return sample(src, *state); });
            counters.push_back(rail.counter);
        }
        impl->rails.push_back(std::move(rail));
    }
    impl->opened = Clock::now();
    // Reads every rail once (the baseline) before its thread starts.
    impl->sampler = std::make_unique<CounterSampler>(std::move(counters), sample_period);
    impl->describe_status();
    return std::unique_ptr<JetsonSoc>(new JetsonSoc(std::move(impl)));
}

Status JetsonSoc::status() const { return impl_->status; }

std::vector<SocMetricInfo> JetsonSoc::metrics() const { return impl_->describe_metrics(); }

std::chrono::nanoseconds JetsonSoc::sample_period() const { return impl_->sampler->period(); }

Result<SocEnergy> JetsonSoc::total_energy() const {
    if (!impl_->status.ok()) return impl_->status.error();
    SocEnergy out;
    out.source = SocEnergySource::IntegratedPower;
    for (const auto& r : impl_->rails) {
        Result<Joules> energy = r.counter ? r.counter->read() : Result<Joules>(*r.source.problem);
        if (!energy) energy = with_rail(energy.error(), r.source.name);
        out.rails.push_back(SocRailEnergy{r.source.name, r.source.metric, std::move(energy)});
    }
    out.elapsed = std::chrono::duration_cast<Seconds>(Clock::now() - impl_->opened);
    for (SocMetric m : kSocMetrics) {
        std::optional<Result<Joules>> sum;
        for (const auto& r : out.rails) {
            if (r.metric != m) continue;
            if (!sum) sum = Result<Joules>(Joules(0));
            if (!sum->ok()) continue;
            if (!r.energy.ok()) {
                sum = r.energy;  // one unreadable rail makes the sum unknown, not smaller
            } else {
                sum = Result<Joules>(**sum + *r.energy);
            }
        }
        if (sum) out.metrics.push_back(SocMetricEnergy{m, std::move(*sum)});
    }
    return out;
}

std::vector<SocRail> JetsonSoc::rails() const {
    std::vector<SocRail> out;
    for (const auto& r : impl_->rails) {
        SocRail rail;
        rail.name = r.source.name;
        rail.metric = r.source.metric;
        rail.source = r.source.describe();
        {
            std::lock_guard lock(r.state->mutex);
            rail.status = r.state->status;
            // Only the latest reading is "current power": none while it fails.
            if (rail.status.ok()) rail.power = r.state->integrator.last_power();
            rail.stats.samples = r.state->integrator.samples();
            rail.stats.failed_reads = r.state->failed_reads;
            rail.stats.negative_readings = r.state->integrator.negative_readings();
            rail.stats.longest_gap = std::chrono::duration_cast<Seconds>(r.state->integrator.longest_gap());
        }
        if (r.counter) {
            rail.energy = r.counter->accumulator().total();
            rail.stats.counter = r.counter->stats();
        }
        out.push_back(std::move(rail));
    }
    return out;
}

}  // namespace zeus
