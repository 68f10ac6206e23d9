// What an energy window measured, and how much each number can be trusted.
#pragma once

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/platform/units.hpp"
#include "zeus/platform/wall_clock.hpp"

namespace zeus {

// How an energy value was obtained, from most to least direct.
enum class EnergySource {
    HardwareCounter,            // difference of a cumulative hardware energy counter
    IntegratedPower,            // power samples integrated over the window (no counter)
    InstantPowerApproximation,  // one instant power reading × window length
    WindowLog,                  // read back from a window log (ReplayMonitor)
};
[[nodiscard]] std::string_view to_string(EnergySource source);

struct EnergyValue {
    Joules energy{0.0};
    EnergySource source = EnergySource::HardwareCounter;
    std::vector<std::string> warnings;  // e.g. the window is shorter than the counter's update period
    // The device stopped answering before the window ended (a lost GPU):
    // its energy is unknown, `energy` is 0 and left out of totals, and a
    // warning says why.
    bool lost = false;
    // A hardware-counter value whose edges were estimated past the counter's
    // last refresh (without EnergyMonitorOptions::wait_for_counter_refresh):
    // the most the value can be off by that estimate. Each edge adds
    // power × the time since the refresh with one power reading; the power
    // in that time may have been anything from 0 W to the GPU's highest
    // power limit, so the bound is, summed over both edges, that time × the
    // larger distance from the reading to 0 W or to the limit. nullopt when
    // the edges were read at a refresh or settled on the next refreshes.
    // CPU packages and DRAM with sampled edges (WindowEdges::Sampled): the
    // same from the watcher's latest reading, with the package's power
    // ceiling (Cpu::power_ceiling) as the limit.
    std::optional<Joules> edge_error_bound = std::nullopt;
};

// What one kind of device's values add up to, and the values a caller must
// hear about as soon as the window ends, without the values themselves.
// Sampled window edges compute it in one pass over the two edges' samples,
// with no per-device allocation, so that ending a window and reading its
// total stays flat in the number of GPUs; the values (with their warnings)
// are built only when read.
template <class Key>
struct EnergyTally {
    Joules total{0.0};                              // the values that are not lost, summed in key order
    std::vector<std::pair<Key, std::string>> lost;  // each lost value's key and first warning ("" without one)
    bool measured_zero = false;                     // a value that is not lost is exactly 0 J

    static EnergyTally of(const std::map<Key, EnergyValue>& values) {
        EnergyTally tally;
        for (const auto& [key, value] : values) tally.add(key, value);
        return tally;
    }
    // `value` added, as of() adds each in key order.
    void add(const Key& key, const EnergyValue& value) {
        if (value.lost) {
            lost.emplace_back(key, value.warnings.empty() ? std::string() : value.warnings.front());
            return;
        }
        add_measured(value.energy);
    }
    // A value that is not lost, with no warning, added by its energy alone.
    void add_measured(Joules energy) {
        total += energy;
        if (energy.count() == 0.0) measured_zero = true;
    }
};

// One kind of device's values in a Measurement: a std::map (by device index
// or SoC metric) whose contents may be computed when first read. Sampled
// window edges (WindowEdges::Sampled) return GPU values computed from the
// two edges' samples on first access, so that end_window costs the same for
// any number of GPUs; every other Measurement holds its values directly.
// Reading is thread-safe as a std::map's const interface is (the values are
// computed once); a non-const access takes this object's own copy.
template <class Key>
class EnergyValues {
  public:
    using map_type = std::map<Key, EnergyValue>;
    using key_type = Key;
    using mapped_type = EnergyValue;
    using value_type = typename map_type::value_type;
    using size_type = typename map_type::size_type;
    using iterator = typename map_type::iterator;
    using const_iterator = typename map_type::const_iterator;
    using tally_type = EnergyTally<Key>;

    EnergyValues() = default;
    EnergyValues(map_type values) : values_(std::move(values)) {}  // NOLINT: a map converts, as before
    EnergyValues(std::initializer_list<value_type> values) : values_(values) {}
    // Values computed by `compute()` (returning a map_type) when first read.
    // It must hold everything it needs (it may run after whatever made it is
    // gone) and must not throw; it is dropped once it has run.
    template <class Compute>
    static EnergyValues deferred(Compute compute) {
        return deferred<Compute>(
            std::move(compute), [](const Compute& c) { return c(); }, nullptr);
    }
    // Values computed by `values(state)` when first read, and their tally by
    // `tally(state)` when it is read before them (it must equal
    // EnergyTally::of(values(state))). `state` must hold everything both
    // need; neither may throw; it is dropped once the values are computed.
    template <class State>
    static EnergyValues deferred(State state, map_type (*values)(const State&), tally_type (*tally)(const State&)) {
        EnergyValues result;
        result.deferred_ = std::make_shared<DeferredBy<State>>(std::move(state), values, tally);
        return result;
    }
    // True while the values have not been computed yet.
    [[nodiscard]] bool pending() const { return deferred_ && !deferred_->done.load(std::memory_order_acquire); }

    [[nodiscard]] const map_type& map() const {
        if (!deferred_) return values_;
        Deferred& d = *deferred_;
        if (!d.done.load(std::memory_order_acquire)) {
            std::lock_guard lock(d.mutex);
            if (!d.done.load(std::memory_order_relaxed)) {
                d.values = d.compute();
                d.done.store(true, std::memory_order_release);
            }
        }
        return d.values;
    }
    [[nodiscard]] map_type& map() {
        if (deferred_) {
            values_ = std::as_const(*this).map();  // copies may share the computed values
            deferred_.reset();
        }
        return values_;
    }
    operator const map_type&() const { return map(); }  // NOLINT: passes where a std::map is expected

    // The values' total, lost values and zeros; without computing the values
    // when they are still pending and can be tallied on their own.
    [[nodiscard]] tally_type tally() const {
        if (!deferred_ || deferred_->done.load(std::memory_order_acquire)) return tally_type::of(map());
        Deferred& d = *deferred_;
        {
            std::lock_guard lock(d.mutex);
            if (!d.done.load(std::memory_order_relaxed)) {
                if (!d.tally) d.tally = d.compute_tally();
                if (d.tally) return *d.tally;
            }
        }
        return tally_type::of(map());  // nothing tallies them on their own
    }

    [[nodiscard]] const_iterator begin() const { return map().begin(); }
    [[nodiscard]] const_iterator end() const { return map().end(); }
    [[nodiscard]] iterator begin() { return map().begin(); }
    [[nodiscard]] iterator end() { return map().end(); }
    [[nodiscard]] const_iterator cbegin() const { return map().cbegin(); }
    [[nodiscard]] const_iterator cend() const { return map().cend(); }
    [[nodiscard]] size_type size() const { return map().size(); }
    [[nodiscard]] bool empty() const { return map().empty(); }
    [[nodiscard]] const EnergyValue& at(const Key& key) const { return map().at(key); }
    [[nodiscard]] EnergyValue& at(const Key& key) { return map().at(key); }
    EnergyValue& operator[](const Key& key) { return map()[key]; }
    [[nodiscard]] const_iterator find(const Key& key) const { return map().find(key); }
    [[nodiscard]] iterator find(const Key& key) { return map().find(key); }
    [[nodiscard]] bool contains(const Key& key) const { return map().contains(key); }
    [[nodiscard]] size_type count(const Key& key) const { return map().count(key); }
    template <class... Args>
    std::pair<iterator, bool> emplace(Args&&... args) {
        return map().emplace(std::forward<Args>(args)...);
    }
    template <class... Args>
    iterator emplace_hint(const_iterator hint, Args&&... args) {
        return map().emplace_hint(hint, std::forward<Args>(args)...);
    }
    std::pair<iterator, bool> insert(value_type value) { return map().insert(std::move(value)); }
    size_type erase(const Key& key) { return map().erase(key); }
    iterator erase(const_iterator it) { return map().erase(it); }
    void clear() {
        deferred_.reset();
        values_.clear();
    }

  private:
    // Guarded by `mutex` until `done` is set; `values` is read-only after.
    struct Deferred {
        Deferred() = default;
        Deferred(const Deferred&) = delete;
        Deferred& operator=(const Deferred&) = delete;
        virtual ~Deferred() = default;
        virtual map_type compute() = 0;                         // once
        virtual std::optional<tally_type> compute_tally() = 0;  // before compute(); nullopt: none of its own
        std::mutex mutex;
        std::atomic<bool> done{false};
        map_type values;
        std::optional<tally_type> tally;
    };
    template <class State>
    struct DeferredBy final : Deferred {
        DeferredBy(State&& state, map_type (*values_of)(const State&), tally_type (*tally_of)(const State&))
            : state_(std::in_place, std::move(state)), values_of_(values_of), tally_of_(tally_of) {}
        map_type compute() override {
            map_type computed = values_of_(*state_);
            state_.reset();  // what it held (samples) is not needed any more
            return computed;
        }
        std::optional<tally_type> compute_tally() override {
            if (tally_of_ == nullptr) return std::nullopt;
            return tally_of_(*state_);
        }
        std::optional<State> state_;
        map_type (*values_of_)(const State&);
        tally_type (*tally_of_)(const State&);
    };
    map_type values_;
    std::shared_ptr<Deferred> deferred_;  // set while the values are (or were) computed on first read
};

struct Measurement {
    WallTime start_time;  // wall clock, for logs (past 2262 too: zeus/platform/wall_clock.hpp)
    Seconds time{0.0};                                  // elapsed, monotonic clock
    EnergyValues<unsigned> gpu_energy;                  // by GPU index
    EnergyValues<unsigned> cpu_energy;                  // CPU package, by CPU index
    EnergyValues<unsigned> dram_energy;                 // DRAM of that package, when it has one
    EnergyValues<std::string> soc_energy;               // SoC metric ("cpu", "gpu", "total")
    std::vector<std::string> warnings;                  // about the window as a whole

    // GPU energy summed, as the original's total_energy (lost GPUs left
    // out); pending sampled values are tallied without being built.
    [[nodiscard]] Joules total_gpu_energy() const;
    // Every GPU, CPU package and DRAM value summed (SoC metrics overlap and are left out).
    [[nodiscard]] Joules total_energy() const;
    // True when no value carries a warning.
    [[nodiscard]] bool trustworthy() const;
};

}  // namespace zeus
