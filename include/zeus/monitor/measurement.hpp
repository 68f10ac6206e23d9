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

    EnergyValues() = default;
    EnergyValues(map_type values) : values_(std::move(values)) {}  // NOLINT: a map converts, as before
    EnergyValues(std::initializer_list<value_type> values) : values_(values) {}
    // Values computed by `compute()` (returning a map_type) when first read.
    // It must hold everything it needs (it may run after whatever made it is
    // gone) and must not throw; it is dropped once it has run.
    template <class Compute>
    static EnergyValues deferred(Compute compute) {
        EnergyValues values;
        values.deferred_ = std::make_shared<DeferredBy<Compute>>(std::move(compute));
        return values;
    }
    // True while the values have not been computed yet.
    [[nodiscard]] bool pending() const { return deferred_ && !deferred_->done.load(std::memory_order_acquire); }

    [[nodiscard]] const map_type& map() const {
        if (!deferred_) return values_;
        std::call_once(deferred_->once, [d = deferred_.get()] {
            d->values = d->compute();
            d->done.store(true, std::memory_order_release);
        });
        return deferred_->values;
    }
    [[nodiscard]] map_type& map() {
        if (deferred_) {
            values_ = std::as_const(*this).map();  // copies may share the computed values
            deferred_.reset();
        }
        return values_;
    }
    operator const map_type&() const { return map(); }  // NOLINT: passes where a std::map is expected

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
    struct Deferred {
        Deferred() = default;
        Deferred(const Deferred&) = delete;
        Deferred& operator=(const Deferred&) = delete;
        virtual ~Deferred() = default;
        virtual map_type compute() = 0;  // once
        std::once_flag once;
        std::atomic<bool> done{false};
        map_type values;
    };
    template <class Compute>
    struct DeferredBy final : Deferred {
        explicit DeferredBy(Compute&& c) : compute_(std::in_place, std::move(c)) {}
        map_type compute() override {
            map_type computed = (*compute_)();
            compute_.reset();  // what it held (samples) is not needed any more
            return computed;
        }
        std::optional<Compute> compute_;
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

    // GPU energy summed, as the original's total_energy.
    [[nodiscard]] Joules total_gpu_energy() const;
    // Every GPU, CPU package and DRAM value summed (SoC metrics overlap and are left out).
    [[nodiscard]] Joules total_energy() const;
    // True when no value carries a warning.
    [[nodiscard]] bool trustworthy() const;
};

}  // namespace zeus
