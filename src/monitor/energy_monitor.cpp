#include "zeus/monitor/energy_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "device/simulator_clock.hpp"
#include "monitor/counter_watch.hpp"
#include "monitor/edge_sampler.hpp"
#include "monitor/counter_edges.hpp"
#include "monitor/host_edges.hpp"
#include "monitor/sampled_gpu_edges.hpp"
#include "monitor/window_log.hpp"
#include "zeus/monitor/power_monitor.hpp"

namespace zeus {
namespace {

using namespace monitor_detail;  // the edges' helpers (counter_edges.hpp, sampled_gpu_edges.hpp, host_edges.hpp)

// How often the counters are cross-checked against power while windows are
// open: a counter restart loses at most this long to the counter.
constexpr std::chrono::milliseconds kCounterWatchPeriod{100};
// wait_for_counter_refresh: two refreshes take ~200 ms; give up after this.
constexpr std::chrono::milliseconds kSettleTimeout{400};

// Positions follow the counter GPUs and cpu_indices_: vectors, not maps, keep
// begin_window to a handful of allocations.
struct CpuReading {
    Joules package{0.0};
    std::optional<Joules> dram;
    CounterStats stats;
};

struct WindowState {
    Timestamp start;
    SystemClock::time_point start_wall;
    WallTime start_time;           // for the Measurement: start_wall's clock ends in 2262
    Seconds start_simulated{0.0};  // on the simulator's virtual clock, when its GPUs are measured
    std::vector<monitor_detail::CounterEdge> gpus;
    std::vector<Joules> sensor_gpus;  // positions follow sensor_gpus_
    std::vector<std::optional<Joules>> settled;  // wait_for_counter_refresh: the begin edge, where it settled
    std::vector<CpuReading> cpus;
    std::optional<SocEnergy> soc_start;
    // Sampled edges: the watcher's frame at the begin edge; `gpus` is built
    // from it when the window ends, off the edge's path.
    std::shared_ptr<const monitor_detail::EdgeSampler::Frame> begin_frame;
};

class EnergyMonitorImpl final : public EnergyMonitor {
  public:
    EnergyMonitorImpl(const Gpus& gpus, const Cpus* cpus, const Soc* soc, EnergyMonitorOptions options)
        : gpus_(gpus),
          cpus_(cpus),
          soc_(soc),
          options_(std::move(options)),
          simulator_clock_(SimulatorClock::virtual_clock_of(gpus)) {}

    Status init() {
        if (options_.gpu_indices) {
            for (unsigned i : *options_.gpu_indices) {
                auto gpu = gpus_.at(i);
                if (!gpu) return gpu.error();
                if (auto s = (*gpu)->status(); !s) return s;
                gpu_indices_.push_back(i);
            }
        } else {
            for (const auto& gpu : gpus_) {
                if (gpu->available()) gpu_indices_.push_back(gpu->identity().index);
            }
        }
        if (std::set<unsigned>(gpu_indices_.begin(), gpu_indices_.end()).size() != gpu_indices_.size()) {
            return Error{ErrorCode::InvalidArgument, "a GPU index is listed twice", "list each GPU once", 0};
        }
        std::vector<unsigned> without_counter;
        CounterGpus counters;
        for (unsigned i : gpu_indices_) {
            if (!gpus_[i].capabilities().energy_counter.supported) {
                without_counter.push_back(i);
                continue;
            }
            auto limits = gpus_[i].power_limit_constraints();
            counters.indices.push_back(i);
            counters.ceilings.push_back(limits ? quantity_cast<Watts>(limits->max) : Watts(0.0));
        }
        counters_ = std::make_shared<const CounterGpus>(std::move(counters));
        if (!counter_gpus().empty() && !simulator_clock_) {
            // Sampled edges: the edge sampler reads the counters for the watch.
            counter_watch_ = std::make_unique<CounterWatch>(
                gpus_, counter_gpus(), samples_edges() ? std::chrono::nanoseconds(0) : kCounterWatchPeriod);
        }
        if (!without_counter.empty() && simulator_clock_ &&
            simulator_clock_->power_sensor_energy(gpus_[without_counter.front()].identity().physical_index)) {
            // No energy counter, on the simulator's virtual clock: no thread
            // can sample while the simulation jumps, so the simulator keeps
            // the sum of its power readings that a sampler seeing every
            // refresh would integrate; windows take its difference.
            sensor_gpus_ = std::move(without_counter);
        } else if (!without_counter.empty()) {
            // No energy counter (pre-Volta): a power timeline, integrated per window.
            PowerMonitorOptions pm;
            pm.gpu_indices = without_counter;
            pm.domains = {PowerDomain::DeviceInstant};
            auto monitor = PowerMonitor::start(gpus_, pm);
            if (!monitor) return monitor.error();
            power_monitor_ = std::move(monitor).value();
            integrated_gpus_ = std::move(without_counter);
        }
        if (cpus_ != nullptr) {
            if (options_.cpu_indices) {
                for (unsigned i : *options_.cpu_indices) {
                    auto cpu = cpus_->at(i);
                    if (!cpu) return cpu.error();
                    if (auto s = (*cpu)->status(); !s) return s;
                    cpu_indices_.push_back(i);
                }
            } else {
                for (const auto& cpu : *cpus_) {
                    if (cpu->available()) cpu_indices_.push_back(cpu->identity().index);
                }
            }
        } else if (options_.cpu_indices && !options_.cpu_indices->empty()) {
            return Error{ErrorCode::NotFound, "CPU indices were given but no CPU energy source is open",
                         "open the Cpus set and pass it to the monitor, or leave cpu_indices unset", 0};
        }
        if (samples_edges()) open_edge_sampler();
        if (options_.log_file) {
            auto log = WindowLog::open(*options_.log_file, gpu_indices_);
            if (!log) return log.error();
            log_ = std::move(log).value();
        }
        return {};
    }

    Status begin_window(std::string_view name, bool sync, bool restart) override {
        const std::string key(name);
        if (!restart && edge_waits(sync)) {
            // Refused before waiting; otherwise the check when the window is stored suffices.
            std::lock_guard lock(mutex_);
            if (windows_.contains(key)) return duplicate(key);
        }
        if (sync) synchronize();
        WindowState state;
        if (edge_sampler_) {
            // The frame before the clock: every sample in it predates the edge.
            edge_sampler_->start();
            auto frame = edge_sampler_->latest();
            state.start = MonitorClock::now();
            state.start_wall = frame->wall_time(state.start);
            state.begin_frame = edge_sampler_->at_edge(std::move(frame), state.start_wall);
            state.start_time = WallClock::now();
        } else {
            state.start_wall = SystemClock::now();
            state.start_time = WallClock::now();
            state.start = MonitorClock::now();
        }
        if (simulator_clock_) state.start_simulated = simulator_clock_->now();
        if (counter_watch_) counter_watch_->start();
        if (!edge_sampler_) state.gpus.reserve(counter_gpus().size());
        for (std::size_t k = 0; k < counter_gpus().size() && !edge_sampler_; ++k) {
            auto edge = read_counter_edge(k);
            if (!edge) return edge.error();
            state.gpus.push_back(
                {edge->energy.energy, edge->energy.error_bound, edge->stats, edge->watched, std::nullopt});
        }
        state.sensor_gpus.reserve(sensor_gpus_.size());
        for (unsigned i : sensor_gpus_) {
            auto energy = sensor_energy_now(i);
            if (!energy) return energy.error();
            state.sensor_gpus.push_back(*energy);
        }
        if (settles_edges()) {
            const auto settled = settle_counters(state.start_wall);
            for (std::size_t k = 0; k < settled.size(); ++k) {
                if (settled[k] && !state.gpus[k].watched.stuck_since) {
                    state.gpus[k].energy = *settled[k];
                    state.gpus[k].error_bound = Joules(0.0);
                }
            }
            state.settled = settled;
        }
        if (!edge_sampler_) {
            if (auto s = read_cpus(state.cpus); !s) return s;
            if (soc_ != nullptr && soc_->available()) {
                if (auto e = soc_->total_energy()) state.soc_start = std::move(e).value();
            }
        }
        std::lock_guard lock(mutex_);
        if (!restart && windows_.contains(key)) return duplicate(key);
        windows_.insert_or_assign(key, std::move(state));
        return {};
    }

    Result<Measurement> end_window(std::string_view name, bool sync, bool cancel) override {
        auto taken = take_window(std::string(name));
        if (!taken) return taken.error();
        // The map's node itself: the window's state is not moved again.
        WindowState& state = taken->mapped();
        if (cancel) return cancelled(state);
        // Instant power before synchronising, as the original does: it is the
        // power of the work the window measured, not of the idle wait after it.
        std::map<unsigned, Watts> instant;
        std::shared_ptr<const monitor_detail::EdgeSampler::Frame> power_frame;
        if (options_.approx_instant_energy) {
            instant = instant_powers();
            if (edge_sampler_) power_frame = edge_sampler_->latest();
        }
        if (sync) synchronize();
        SampledEnd window;
        if (edge_sampler_) {
            auto frame = edge_sampler_->latest();  // before the clock, as at the begin edge
            window.end = MonitorClock::now();
            window.end_wall = frame->wall_time(window.end);
            window.end_frame = edge_sampler_->at_edge(std::move(frame), window.end_wall);
        } else {
            window.end = MonitorClock::now();
            window.end_wall = SystemClock::now();
        }
        Measurement m;
        m.start_time = state.start_time;
        // The steady clock only, and never negative (a faked one may go back).
        m.time =
            std::max(Seconds(0.0), simulator_clock_ ? simulator_clock_->now() - state.start_simulated
                                                    : std::chrono::duration_cast<Seconds>(window.end - state.start));
        auto uncounted = uncounted_gpu_values(state, window.end);
        if (!uncounted) return uncounted.error();
        std::map<unsigned, EnergyValue> others = std::move(uncounted).value();
        if (window.end_frame) {
            add_sampled_host_values(state, window, m);
            window.counters = counters_;
            window.begin_frame = std::move(state.begin_frame);
            window.power_frame = std::move(power_frame);
            window.start = state.start;
            window.start_wall = state.start_wall;
            window.time = m.time;
            window.others = std::move(others);
            window.approx_instant_energy = options_.approx_instant_energy;
            window.instant = std::move(instant);
            m.gpu_energy = EnergyValues<unsigned>::deferred(std::move(window), &sampled_gpu_values, &sampled_gpu_tally);
        } else {
            auto values = counter_values(state, window.end, window.end_wall, m.time);
            values.merge(others);
            mark_zeros(values, options_.approx_instant_energy, instant, m.time);
            m.gpu_energy = std::move(values);
            if (auto s = add_cpu_values(state, m); !s) return s.error();
            add_soc_values(state, m);
        }
        if (log_ && !name.starts_with(kInternalWindowPrefix)) {
            if (auto s = log_->append(std::string(name), m); !s) m.warnings.push_back(s.error().describe());
        }
        return m;
    }

    std::vector<std::string> reset_windows() override {
        std::lock_guard lock(mutex_);
        std::vector<std::string> names;
        for (const auto& [name, state] : windows_) names.push_back(name);
        windows_.clear();
        std::sort(names.begin(), names.end());
        return names;
    }

    [[nodiscard]] std::vector<std::string> open_windows() const override {
        std::lock_guard lock(mutex_);
        std::vector<std::string> names;
        for (const auto& [name, state] : windows_) names.push_back(name);
        std::sort(names.begin(), names.end());
        return names;
    }

    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return gpu_indices_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return cpu_indices_; }

    void stop_threads() override {
        if (edge_sampler_) edge_sampler_->stop();
        if (counter_watch_) counter_watch_->stop();
        if (power_monitor_) power_monitor_->stop();
    }

  private:
    [[nodiscard]] const std::vector<unsigned>& counter_gpus() const { return counters_->indices; }

    // Removes the open window `key` and returns where it began.
    using WindowNode = std::unordered_map<std::string, WindowState>::node_type;
    Result<WindowNode> take_window(const std::string& key) {
        std::lock_guard lock(mutex_);
        auto it = windows_.find(key);
        if (it == windows_.end()) {
            return Error{ErrorCode::NotFound, fmt::format("measurement window '{}' does not exist", key),
                         open_names_locked(), 0};
        }
        return windows_.extract(it);
    }

    // A cancelled window: zeros, as the original's.
    [[nodiscard]] Measurement cancelled(const WindowState& state) const {
        Measurement m;
        m.start_time = state.start_time;
        for (unsigned i : gpu_indices_) m.gpu_energy[i] = EnergyValue{};
        for (unsigned i : cpu_indices_) m.cpu_energy[i] = EnergyValue{};
        return m;
    }

    // approx_instant_energy: each GPU's instant power, read now. With
    // sampled edges only the GPUs without a counter: the others' power is
    // the watcher's (no driver call on the caller's thread).
    [[nodiscard]] std::map<unsigned, Watts> instant_powers() const {
        std::map<unsigned, Watts> instant;
        for (unsigned i : gpu_indices_) {
            if (edge_sampler_ && gpus_[i].capabilities().energy_counter.supported) continue;
            if (auto p = gpus_[i].instant_power()) instant[i] = quantity_cast<Watts>(p->power);
        }
        return instant;
    }

    // The GPUs without an energy counter: the simulator's power sum or the
    // integrated power timeline. Error when the simulator's sum cannot be read.
    Result<std::map<unsigned, EnergyValue>> uncounted_gpu_values(const WindowState& state, Timestamp end) const {
        std::map<unsigned, EnergyValue> values;
        for (std::size_t k = 0; k < sensor_gpus_.size(); ++k) {
            const unsigned i = sensor_gpus_[k];
            auto energy = sensor_energy_now(i);
            if (!energy) return energy.error();
            values[i] = EnergyValue{std::max(Joules(0.0), *energy - state.sensor_gpus[k]), EnergySource::IntegratedPower,
                                    {}};
        }
        if (!power_monitor_) return values;
        // Each GPU on its own: one that stopped answering is marked lost, the
        // others keep their energy.
        auto integrated = power_monitor_->energy_by_gpu(state.start, end);
        for (unsigned i : integrated_gpus_) {
            std::string why = integrated ? std::string("the GPU is not sampled") : integrated.error().describe();
            if (integrated) {
                if (auto found = integrated->find(i); found != integrated->end()) {
                    if (found->second) {
                        values[i] = EnergyValue{*found->second, EnergySource::IntegratedPower, {}};
                        continue;
                    }
                    why = found->second.error().describe();
                }
            }
            values[i] = lost_value(EnergySource::IntegratedPower,
                                   fmt::format("GPU {} stopped answering during the window, its energy is unknown: {}{}",
                                               i, read_failure(i), why));
        }
        return values;
    }

    // Synchronous edges: each counter GPU read now, on the caller's thread
    // (or settled on the counters' next refreshes).
    std::map<unsigned, EnergyValue> counter_values(const WindowState& state, Timestamp end,
                                                   SystemClock::time_point end_wall, Seconds time) const {
        std::map<unsigned, EnergyValue> values;
        // Formatted once per window, not once per GPU.
        std::string short_window;
        if (time < kCounterUpdatePeriod && !counter_gpus().empty()) short_window = short_window_warning(time);
        // Every counter read at the edge, before waiting for the counters'
        // refreshes: a stuck counter's stand-in energy (the power integrated
        // up to the read) must end at the edge, not up to kSettleTimeout
        // after it, which counted 0.4 s of power twice.
        std::vector<Result<CounterEdgeRead>> reads;
        reads.reserve(counter_gpus().size());
        for (std::size_t k = 0; k < counter_gpus().size(); ++k) reads.push_back(read_counter_edge(k));
        std::vector<std::optional<Joules>> settled_end;
        if (settles_edges()) settled_end = settle_counters(end_wall);
        for (std::size_t k = 0; k < counter_gpus().size(); ++k) {
            const unsigned i = counter_gpus()[k];
            const auto& begin = state.gpus[k];
            const auto& read = reads[k];
            if (!read) {
                // One lost GPU must not cost the others their measurement.
                values.emplace_hint(values.end(), i,
                                    lost_value(EnergySource::HardwareCounter,
                                               fmt::format("GPU {} could not be read at the end of the window, its "
                                                           "energy is unknown: {}",
                                                           i, read.error().describe())));
                continue;
            }
            const auto& watched = read->watched;
            EdgeEstimate at_end = read->energy;
            const bool settles = settles_edges() && !watched.stuck_since;
            if (settles && settled_end[k]) at_end = EdgeEstimate{*settled_end[k]};
            EnergyValue value = counter_difference(begin, at_end, watched);
            if (!short_window.empty()) value.warnings.push_back(short_window);
            if (settles && (!settled_end[k] || !state.settled[k])) {
                value.warnings.push_back(fmt::format(
                    "the energy counter did not refresh twice within {} ms of a window edge: that edge is "
                    "estimated from the last refresh and the instant power, which may miss a change just before it "
                    "(the value is off by at most {:.3f} J)",
                    kSettleTimeout.count(), value.edge_error_bound.value_or(Joules(0.0)).count()));
            }
            note_counter_history(value, i, begin, watched, read->stats, end);
            note_impossible_power(value, i, counters_->ceilings[k], time);
            values.emplace_hint(values.end(), i, std::move(value));
        }
        return values;
    }

    // CPU packages and their DRAM, read now.
    Status add_cpu_values(const WindowState& state, Measurement& m) const {
        std::vector<CpuReading> cpu_end;
        if (auto s = read_cpus(cpu_end); !s) return s;
        for (std::size_t k = 0; k < cpu_indices_.size(); ++k) {
            const unsigned i = cpu_indices_[k];
            const CpuReading& before = state.cpus[k];
            const CpuReading& after = cpu_end[k];
            EnergyValue value{after.package - before.package, EnergySource::HardwareCounter, {}};
            if (after.stats.resets != before.stats.resets ||
                after.stats.backward_glitches != before.stats.backward_glitches ||
                after.stats.jump_glitches != before.stats.jump_glitches ||
                after.stats.late_reads != before.stats.late_reads) {
                value.warnings.push_back("the RAPL counter reset, glitched or was read late during the window");
            }
            m.cpu_energy.emplace_hint(m.cpu_energy.end(), i, std::move(value));
            if (after.dram && before.dram) {
                m.dram_energy.emplace_hint(m.dram_energy.end(), i,
                                           EnergyValue{*after.dram - *before.dram, EnergySource::HardwareCounter, {}});
            }
        }
        return {};
    }

    // The SoC's metrics, read now (none when the begin edge could not read them).
    void add_soc_values(const WindowState& state, Measurement& m) const {
        if (!state.soc_start || soc_ == nullptr) return;
        auto now = soc_->total_energy();
        if (!now) return;
        const SocEnergy delta = now->since(*state.soc_start);
        for (const auto& metric : delta.metrics) {
            if (metric.energy) {
                m.soc_energy[std::string(to_string(metric.metric))] =
                    EnergyValue{*metric.energy, EnergySource::IntegratedPower, {}};
            }
        }
    }

    static Error duplicate(const std::string& key) {
        return Error{ErrorCode::InvalidState, fmt::format("measurement window '{}' already exists", key),
                     "end it first, give this window another name, or begin it with restart = true", 0};
    }

    std::string open_names_locked() const {
        if (windows_.empty()) return "no window is open";
        std::vector<std::string> names;
        for (const auto& [name, state] : windows_) names.push_back("'" + name + "'");
        std::sort(names.begin(), names.end());
        return fmt::format("open windows: {}", fmt::join(names, ", "));
    }

    // Whether a window edge synchronises the GPUs or reads a device on the
    // caller's thread. (GPUs measured by the simulator's power sum exist only
    // on its virtual clock, where edges are synchronous.)
    [[nodiscard]] bool edge_waits(bool sync) const { return (sync && options_.sync) || !edge_sampler_; }

    // Sampled edges, where they can be: on the real clock, and not while
    // waiting for the counters' refreshes (which reads them itself).
    [[nodiscard]] bool samples_edges() const {
        return options_.edges == WindowEdges::Sampled && !options_.wait_for_counter_refresh && !simulator_clock_;
    }

    // One thread reads every counter GPU, CPU package and the SoC for the edges.
    void open_edge_sampler() {
        EdgeSampler::HostDevices host;
        auto packages = std::make_shared<monitor_detail::SampledPackages>();
        for (unsigned i : cpu_indices_) {
            const Cpu& cpu = (*cpus_)[i];
            host.cpus.push_back(&cpu);
            packages->indices.push_back(i);
            packages->ceilings.push_back(cpu.power_ceiling());
            packages->has_dram.push_back(cpu.has_dram() && cpu.dram_status().ok());
        }
        if (soc_ != nullptr && soc_->available()) host.soc = soc_;
        if (counter_gpus().empty() && host.cpus.empty() && host.soc == nullptr) return;
        packages_ = std::move(packages);
        edge_sampler_ = std::make_unique<EdgeSampler>(gpus_, counter_gpus(), counter_watch_.get(), std::move(host));
    }

    // Sampled edges: the CPU, DRAM and SoC values, computed from the two
    // edges' frames when first read.
    void add_sampled_host_values(const WindowState& state, const SampledEnd& window, Measurement& m) const {
        // GPUs alone: not even the frames' reference counts (a sampled pair is ~0.3 µs).
        if (packages_->indices.empty() && !window.end_frame->soc) return;
        // One window shared by the maps' computations: one allocation, and a
        // reference count each, instead of three frames' counts per map.
        auto host = std::make_shared<const monitor_detail::HostWindow>(
            monitor_detail::HostWindow{packages_, state.begin_frame, window.end_frame, state.start, window.end});
        if (!packages_->indices.empty()) {
            m.cpu_energy = EnergyValues<unsigned>::deferred(
                [host] { return monitor_detail::sampled_package_values(*host, true); });
            m.dram_energy = EnergyValues<unsigned>::deferred(
                [host] { return monitor_detail::sampled_package_values(*host, false); });
        }
        if (window.end_frame->soc) {
            m.soc_energy =
                EnergyValues<std::string>::deferred([host] { return monitor_detail::sampled_soc_values(*host); });
        }
    }

    void synchronize() const {
        if (options_.sync && !gpu_indices_.empty()) options_.sync(gpu_indices_);
    }

    Status read_cpus(std::vector<CpuReading>& out) const {
        out.reserve(cpu_indices_.size());
        for (unsigned i : cpu_indices_) {
            auto energy = (*cpus_)[i].total_energy();
            if (!energy) return energy.error();
            out.push_back(CpuReading{energy->package, energy->dram, energy->package_stats});
        }
        return {};
    }

    // Why GPU `gpu` cannot be read now ("GPU is lost: ...; "), or nothing
    // when it answers again.
    [[nodiscard]] std::string read_failure(unsigned gpu) const {
        auto power = gpus_[gpu].instant_power();
        return power ? std::string() : power.error().describe() + "; ";
    }

    // The simulator's power readings integrated up to its now: the sum up to
    // the latest refresh plus that reading held since.
    [[nodiscard]] Result<Joules> sensor_energy_now(unsigned gpu) const {
        auto sensor = simulator_clock_->power_sensor_energy(gpus_[gpu].identity().physical_index);
        if (!sensor) {
            return Error{ErrorCode::Unavailable, fmt::format("cannot read the simulator's power sensor of GPU {}", gpu),
                         "check that the simulator library matches this build", 0};
        }
        const auto held = std::max(simulator_clock_->wall_now() - sensor->refreshed_at, SystemClock::duration::zero());
        return sensor->energy + sensor->reading * held;
    }

    // On the virtual clock nothing refreshes while we wait.
    [[nodiscard]] bool settles_edges() const { return options_.wait_for_counter_refresh && !simulator_clock_; }

    // wait_for_counter_refresh: per counter GPU, the energy at `edge` from
    // the counter's first two refreshes after it, E1 at t1 and E2 at t2:
    // E1 − (E2 − E1) / (t2 − t1) × (t1 − edge). Exact while the power is
    // steady from the edge to t2 (the counter holds the truth at each
    // refresh). nullopt for a GPU without refresh times or that did not
    // refresh twice in time.
    [[nodiscard]] std::vector<std::optional<Joules>> settle_counters(SystemClock::time_point edge) const {
        struct Refresh {
            Joules energy;
            SystemClock::time_point at;
        };
        std::vector<std::optional<Refresh>> first(counter_gpus().size());
        std::vector<std::optional<Joules>> settled(counter_gpus().size());
        std::vector<bool> pending(counter_gpus().size(), true);
        const auto deadline = MonitorClock::now() + kSettleTimeout;
        for (;;) {
            bool any = false;
            for (std::size_t k = 0; k < counter_gpus().size(); ++k) {
                if (!pending[k]) continue;
                auto snapshot = gpus_[counter_gpus()[k]].energy_snapshot();
                if (!snapshot || !snapshot->refreshed_at) {
                    pending[k] = false;
                    continue;
                }
                const auto at = *snapshot->refreshed_at;
                const Joules energy = snapshot->energy;
                if (at > edge && !first[k]) {
                    first[k] = Refresh{energy, at};
                } else if (first[k] && at > first[k]->at) {
                    const Watts after = (energy - first[k]->energy) / Seconds(at - first[k]->at);
                    settled[k] = first[k]->energy - after * (first[k]->at - edge);
                    pending[k] = false;
                    continue;
                }
                any = true;
            }
            if (!any || MonitorClock::now() >= deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return settled;
    }

    // A counter GPU's edge, read now: its energy (interpolated past the
    // counter's last refresh, unless it is stuck), the watch's view brought
    // up to now, and the counter's stats. A counter that refuses to be read
    // falls back on the power as a stuck one does (counter_or_stand_in).
    // `k`: the GPU's position in counter_gpus().
    struct CounterEdgeRead {
        EdgeEstimate energy;
        monitor_detail::CounterWatch::GpuView watched;
        std::optional<CounterStats> stats;
    };
    [[nodiscard]] Result<CounterEdgeRead> read_counter_edge(std::size_t k) const {
        const unsigned gpu = counter_gpus()[k];
        auto read = gpus_[gpu].energy_snapshot();
        CounterWatch::GpuView view = counter_watch_ ? counter_watch_->view(gpu) : CounterWatch::GpuView{};
        auto snapshot = counter_or_stand_in(std::move(read), view);
        if (!snapshot) return snapshot.error();
        const auto watched = watched_at(std::move(view), *snapshot, MonitorClock::now());
        return CounterEdgeRead{counter_energy(k, *snapshot, watched), watched, gpus_[gpu].energy_counter_stats()};
    }

    // The counter at now: interpolated past its last refresh, unless it is
    // stuck (the watch then supplies the energy since it stopped). `k`: the
    // GPU's position in counter_gpus().
    [[nodiscard]] EdgeEstimate counter_energy(std::size_t k, const EnergySnapshot& snapshot,
                                              const monitor_detail::CounterWatch::GpuView& watched) const {
        if (watched.stuck_since) return EdgeEstimate{quantity_cast<Joules>(snapshot.energy)};
        return energy_at(snapshot, interpolation_time(snapshot), counters_->ceilings[k]);
    }

    // The time right after the read, to interpolate the counter to (none
    // without a refresh time: no clock read). On the simulator's virtual
    // clock, its own time: refresh times are on its scale, not the host's.
    [[nodiscard]] std::optional<SystemClock::time_point> interpolation_time(const EnergySnapshot& snapshot) const {
        if (!snapshot.refreshed_at) return std::nullopt;
        return simulator_clock_ ? simulator_clock_->wall_now() : SystemClock::now();
    }

    const Gpus& gpus_;
    const Cpus* cpus_;
    const Soc* soc_;
    EnergyMonitorOptions options_;
    std::vector<unsigned> gpu_indices_;
    std::vector<unsigned> cpu_indices_;
    std::shared_ptr<const CounterGpus> counters_;  // set by init()
    std::shared_ptr<const monitor_detail::SampledPackages> packages_;  // sampled edges: the CPUs the sampler reads
    std::vector<unsigned> integrated_gpus_;  // integrated from power_monitor_
    std::vector<unsigned> sensor_gpus_;      // integrated by the simulator (virtual clock)
    std::unique_ptr<PowerMonitor> power_monitor_;
    std::unique_ptr<monitor_detail::CounterWatch> counter_watch_;  // real clock, GPUs with a counter
    std::unique_ptr<monitor_detail::EdgeSampler> edge_sampler_;    // sampled edges (real clock, counters)
    // Set when the GPUs are the simulator's on its virtual clock: window
    // lengths are then simulated time, like the energy.
    std::optional<SimulatorClock> simulator_clock_;
    std::unique_ptr<WindowLog> log_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, WindowState> windows_;
};

}  // namespace

Result<std::unique_ptr<EnergyMonitor>> EnergyMonitor::open(const Gpus& gpus, const Cpus* cpus, const Soc* soc,
                                                           EnergyMonitorOptions options) {
    auto monitor = std::make_unique<EnergyMonitorImpl>(gpus, cpus, soc, std::move(options));
    if (auto s = monitor->init(); !s) return s.error();
    return std::unique_ptr<EnergyMonitor>(std::move(monitor));
}

ScopedWindow::ScopedWindow(EnergyMonitor& monitor, std::string name, bool sync)
    : monitor_(monitor), name_(std::move(name)), sync_(sync), begun_(monitor_.begin_window(name_, sync_)) {}

ScopedWindow::~ScopedWindow() {
    if (begun_ && !ended_) (void)monitor_.end_window(name_, sync_, /*cancel=*/true);
}

Result<Measurement> ScopedWindow::end() {
    if (!begun_) return begun_.error();
    if (ended_) {
        return Error{ErrorCode::InvalidState, fmt::format("window '{}' was already ended", name_), {}, 0};
    }
    ended_ = true;
    return monitor_.end_window(name_, sync_);
}

}  // namespace zeus
