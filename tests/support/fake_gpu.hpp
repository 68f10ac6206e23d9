// A scriptable GPU in the test's own process (the mock tier, as GEOPM's
// MockPlatformIO): no vendor library, no simulator, no file. The test sets
// what each call answers and reads back what was called, so the truth a
// test checks against is the script itself.
//
// - Energy: the counter integrates the power drawn (draw()) over the fake's
//   clock, the real system clock unless the test gives it a ManualClock;
//   with refresh_every() it only moves at each refresh, like NVML's counter
//   (the snapshot then carries the refresh time and the power at it).
// - Readings per call: script_energy / script_power / script_temperature
//   queue answers (values or Errors) for the next calls, in order; after the
//   queue the steady state answers again.
// - Errors: fail(call, error, times) makes a call fail; lose() makes every
//   reading fail as a lost GPU does, until recover().
// - Settings: set_power_limit / locked clocks / persistence are kept and
//   read back; a limit outside the constraints, or a clock range upside
//   down, is refused as a driver does.
// - calls(Call) counts every call, calls_on(thread, Call) those made on one
//   thread; set_latency() delays every call.
// Thread-safe: monitors read from their own threads.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "zeus/device/gpu.hpp"
#include "zeus/device/gpus.hpp"

namespace zeus::testing {

// A clock that moves only when the test says so.
class ManualClock {
  public:
    using TimePoint = std::chrono::system_clock::time_point;
    explicit ManualClock(TimePoint start = std::chrono::system_clock::now()) : now_(start) {}
    [[nodiscard]] TimePoint now() const {
        const std::lock_guard lock(mutex_);
        return now_;
    }
    void advance(std::chrono::duration<double> d) {
        const std::lock_guard lock(mutex_);
        now_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    }

  private:
    mutable std::mutex mutex_;
    TimePoint now_;
};

class FakeGpu : public Gpu {
  public:
    // Every Gpu call, for fail() and calls().
    enum class Call {
        TotalEnergy, EnergySnapshot, Power, Temperature, SmClock, PowerLimit, DefaultPowerLimit,
        PowerLimitConstraints, SetPowerLimit, ResetPowerLimit, CheckPowerLimitControl, SupportedMemoryClocks,
        SupportedGraphicsClocks, SetGpuLockedClocks, ResetGpuLockedClocks, SetMemoryLockedClocks,
        ResetMemoryLockedClocks, PersistenceMode, SetPersistenceMode, Count
    };
    static constexpr unsigned kForever = ~0U;
    using TimePoint = std::chrono::system_clock::time_point;

    // A Hopper board drawing 300 W, limits 200–700 W (700 W set and default),
    // 50 °C, with an energy counter and instant and average power.
    explicit FakeGpu(unsigned index = 0, std::shared_ptr<ManualClock> clock = nullptr)
        : clock_(std::move(clock)), last_change_(now()), origin_(last_change_) {
        identity_.index = index;
        identity_.physical_index = index;
        identity_.name = "fake";
        identity_.uuid = "GPU-fake-" + std::to_string(index);
        identity_.architecture = GpuArchitecture::Hopper;
        caps_.energy_counter = Capability::yes();
        caps_.instant_power = {Capability::yes(), PowerScope::Gpu};
        caps_.average_power = {Capability::yes(), PowerScope::Gpu};
        caps_.memory_power = {Capability::no("the fake GPU has no memory power"), PowerScope::Memory};
        caps_.power_limit = Capability::yes();
    }

    // --- The script -------------------------------------------------------
    // Set before the GPU is handed to the code under test.
    GpuIdentity& script_identity() { return identity_; }
    GpuCapabilities& script_capabilities() { return caps_; }

    // Draws `power` from now on; the energy counter integrates it.
    void draw(Milliwatts power) {
        const std::lock_guard lock(mutex_);
        settle(now());
        power_ = power;
    }
    // The counter (and its snapshot) moves only every `period` from the
    // fake's creation; zero: continuously (the default).
    void refresh_every(std::chrono::nanoseconds period) {
        const std::lock_guard lock(mutex_);
        refresh_ = period;
    }
    // The energy counter's total so far, by the script: ∫ power dt up to the
    // last refresh (now, without a refresh period).
    [[nodiscard]] Millijoules energy_by_script() const {
        const std::lock_guard lock(mutex_);
        return counter_at(refreshed_at(now()));
    }
    // The next calls answer these, in order.
    void script_energy(std::vector<Result<Millijoules>> answers) { queue(energy_queue_, std::move(answers)); }
    void script_power(std::vector<Result<PowerReading>> answers) { queue(power_queue_, std::move(answers)); }
    void script_temperature(std::vector<Result<Celsius>> answers) { queue(temperature_queue_, std::move(answers)); }
    void set_temperature(Celsius t) {
        const std::lock_guard lock(mutex_);
        temperature_ = t;
    }
    void set_sm_clock(Result<Megahertz> clock) {
        const std::lock_guard lock(mutex_);
        sm_clock_ = std::move(clock);
    }
    void set_constraints(Milliwatts min, Milliwatts max, Milliwatts default_limit) {
        const std::lock_guard lock(mutex_);
        constraints_ = {min, max};
        default_limit_ = default_limit;
        limit_ = default_limit;
    }
    void set_supported_clocks(std::vector<Megahertz> memory, std::vector<Megahertz> graphics) {
        const std::lock_guard lock(mutex_);
        memory_clocks_ = std::move(memory);
        graphics_clocks_ = std::move(graphics);
    }
    // The next `times` calls of `call` fail with `error` (after any earlier
    // failures scripted for it).
    void fail(Call call, Error error, unsigned times = kForever) {
        const std::lock_guard lock(mutex_);
        failures_[index(call)].push_back({std::move(error), times});
    }
    // Every reading fails as a lost GPU's do (NVML_ERROR_GPU_IS_LOST), until recover().
    void lose() { lost_ = true; }
    void recover() { lost_ = false; }
    // Every call takes at least this long.
    void set_latency(std::chrono::nanoseconds latency) { latency_ = latency.count(); }

    // --- What was called ----------------------------------------------------
    [[nodiscard]] unsigned calls(Call call) const { return calls_[index(call)].load(); }
    // Calls of `call` made on `thread` (e.g. the test's own, which a
    // monitor with its own threads must not read the driver on).
    [[nodiscard]] unsigned calls_on(std::thread::id thread, Call call) const {
        const std::lock_guard lock(mutex_);
        const auto it = calls_by_thread_.find(thread);
        return it == calls_by_thread_.end() ? 0U : it->second[index(call)];
    }
    [[nodiscard]] std::optional<std::pair<Megahertz, Megahertz>> locked_gpu_clocks() const {
        const std::lock_guard lock(mutex_);
        return gpu_clocks_;
    }
    [[nodiscard]] std::optional<std::pair<Megahertz, Megahertz>> locked_memory_clocks() const {
        const std::lock_guard lock(mutex_);
        return memory_locked_;
    }

    // --- Gpu ------------------------------------------------------------------
    const GpuIdentity& identity() const override { return identity_; }
    const GpuCapabilities& capabilities() const override { return caps_; }
    Status status() const override { return {}; }
    Result<Millijoules> total_energy() const override {
        if (auto e = enter(Call::TotalEnergy)) return *e;
        if (auto answer = dequeue(energy_queue_)) return *answer;
        const std::lock_guard lock(mutex_);
        return counter_at(refreshed_at(now()));
    }
    Result<EnergySnapshot> energy_snapshot() const override {
        if (auto e = enter(Call::EnergySnapshot)) return *e;
        if (auto answer = dequeue(energy_queue_)) {
            if (!*answer) return answer->error();
            return EnergySnapshot{**answer, std::nullopt, std::nullopt};
        }
        const std::lock_guard lock(mutex_);
        const TimePoint at = refreshed_at(now());
        return EnergySnapshot{counter_at(at), at, power_};
    }
    Result<PowerReading> power(PowerDomain domain) const override {
        if (auto e = enter(Call::Power)) return *e;
        if (!caps_.power(domain).support.supported) {
            return Error{ErrorCode::NotSupported, std::string(to_string(domain)) + " power is not supported", "", 0};
        }
        if (auto answer = dequeue(power_queue_)) return *answer;
        const std::lock_guard lock(mutex_);
        return PowerReading{power_, std::nullopt};
    }
    Result<Celsius> temperature() const override {
        if (auto e = enter(Call::Temperature)) return *e;
        if (auto answer = dequeue(temperature_queue_)) return *answer;
        const std::lock_guard lock(mutex_);
        return temperature_;
    }
    Result<Megahertz> sm_clock() const override {
        if (auto e = enter(Call::SmClock)) return *e;
        const std::lock_guard lock(mutex_);
        return sm_clock_;
    }
    Result<Milliwatts> power_limit() const override { return read(Call::PowerLimit, limit_); }
    Result<Milliwatts> default_power_limit() const override { return read(Call::DefaultPowerLimit, default_limit_); }
    Result<PowerLimitConstraints> power_limit_constraints() const override {
        return read(Call::PowerLimitConstraints, constraints_);
    }
    Status set_power_limit(Milliwatts limit) override {
        if (auto e = enter(Call::SetPowerLimit)) return *e;
        const std::lock_guard lock(mutex_);
        if (limit < constraints_.min || limit > constraints_.max) {
            return Error{ErrorCode::InvalidArgument, "power limit " + std::to_string(limit.count()) +
                                                         " mW is outside the fake GPU's constraints", "", 0};
        }
        limit_ = limit;
        return {};
    }
    Status reset_power_limit() override {
        if (auto e = enter(Call::ResetPowerLimit)) return *e;
        const std::lock_guard lock(mutex_);
        limit_ = default_limit_;
        return {};
    }
    Status check_power_limit_control() override {
        if (auto e = enter(Call::CheckPowerLimitControl)) return *e;
        return {};
    }
    Result<std::vector<Megahertz>> supported_memory_clocks() const override {
        return read(Call::SupportedMemoryClocks, memory_clocks_);
    }
    Result<std::vector<Megahertz>> supported_graphics_clocks(std::optional<Megahertz>) const override {
        return read(Call::SupportedGraphicsClocks, graphics_clocks_);
    }
    Status set_gpu_locked_clocks(Megahertz min, Megahertz max) override {
        return write_clocks(Call::SetGpuLockedClocks, gpu_clocks_, min, max);
    }
    Status reset_gpu_locked_clocks() override { return write(Call::ResetGpuLockedClocks, gpu_clocks_, std::nullopt); }
    Status set_memory_locked_clocks(Megahertz min, Megahertz max) override {
        return write_clocks(Call::SetMemoryLockedClocks, memory_locked_, min, max);
    }
    Status reset_memory_locked_clocks() override { return write(Call::ResetMemoryLockedClocks, memory_locked_, std::nullopt); }
    Result<bool> persistence_mode() const override { return read(Call::PersistenceMode, persistence_); }
    Status set_persistence_mode(bool enabled) override {
        return write(Call::SetPersistenceMode, persistence_, enabled);
    }

  private:
    struct Failure {
        Error error;
        unsigned times;
    };
    static constexpr std::size_t index(Call call) { return static_cast<std::size_t>(call); }

    [[nodiscard]] TimePoint now() const { return clock_ ? clock_->now() : std::chrono::system_clock::now(); }

    // Counts the call, waits the latency, and gives the error it must fail
    // with, if any: a lost GPU's, else the next scripted failure.
    [[nodiscard]] std::optional<Error> enter(Call call) const {
        ++calls_[index(call)];
        {
            const std::lock_guard lock(mutex_);
            ++calls_by_thread_[std::this_thread::get_id()][index(call)];
        }
        if (const auto ns = latency_.load(); ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
        if (lost_) return Error{ErrorCode::GpuLost, "GPU is lost (fake)", "", 0};
        const std::lock_guard lock(mutex_);
        auto& failures = failures_[index(call)];
        if (failures.empty()) return std::nullopt;
        Error error = failures.front().error;
        if (failures.front().times != kForever && --failures.front().times == 0) failures.pop_front();
        return error;
    }
    template <class T>
    Result<T> read(Call call, const T& value) const {
        if (auto e = enter(call)) return *e;
        const std::lock_guard lock(mutex_);
        return value;
    }
    template <class T, class V>
    Status write(Call call, T& setting, V value) {
        if (auto e = enter(call)) return *e;
        const std::lock_guard lock(mutex_);
        setting = std::move(value);
        return {};
    }
    // A range whose minimum is above its maximum is refused, as a driver does.
    Status write_clocks(Call call, std::optional<std::pair<Megahertz, Megahertz>>& setting, Megahertz min,
                        Megahertz max) {
        if (min > max) {
            if (auto e = enter(call)) return *e;
            return Error{ErrorCode::InvalidArgument, "min clock above max clock", "", 0};
        }
        return write(call, setting, std::pair{min, max});
    }
    template <class T>
    void queue(std::deque<Result<T>>& q, std::vector<Result<T>> answers) {
        const std::lock_guard lock(mutex_);
        for (auto& a : answers) q.push_back(std::move(a));
    }
    template <class T>
    std::optional<Result<T>> dequeue(std::deque<Result<T>>& q) const {
        const std::lock_guard lock(mutex_);
        if (q.empty()) return std::nullopt;
        Result<T> answer = std::move(q.front());
        q.pop_front();
        return answer;
    }

    // Folds the energy drawn up to `t` into energy_mj_ (power changes at t).
    void settle(TimePoint t) {
        energy_mj_ = mj_at(t);
        last_change_ = t;
    }
    [[nodiscard]] double mj_at(TimePoint t) const {
        const double seconds = std::chrono::duration<double>(t - last_change_).count();
        return energy_mj_ + static_cast<double>(power_.count()) * std::max(seconds, 0.0);
    }
    [[nodiscard]] Millijoules counter_at(TimePoint t) const {
        return Millijoules(static_cast<std::int64_t>(mj_at(t)));
    }
    [[nodiscard]] TimePoint refreshed_at(TimePoint t) const {
        if (refresh_.count() <= 0) return t;
        const auto ticks = (t - origin_) / refresh_;
        return origin_ + std::chrono::duration_cast<TimePoint::duration>(ticks * refresh_);
    }

    std::shared_ptr<ManualClock> clock_;
    GpuIdentity identity_;
    GpuCapabilities caps_;
    mutable std::mutex mutex_;
    Milliwatts power_{300'000};
    double energy_mj_ = 0;  // at last_change_
    TimePoint last_change_;
    TimePoint origin_;
    std::chrono::nanoseconds refresh_{0};
    Celsius temperature_{50.0};
    Result<Megahertz> sm_clock_{Megahertz(1980)};
    Milliwatts limit_{700'000};
    Milliwatts default_limit_{700'000};
    PowerLimitConstraints constraints_{Milliwatts(200'000), Milliwatts(700'000)};
    std::vector<Megahertz> memory_clocks_{Megahertz(2619)};
    std::vector<Megahertz> graphics_clocks_{Megahertz(1980), Megahertz(1410), Megahertz(210)};
    std::optional<std::pair<Megahertz, Megahertz>> gpu_clocks_;
    std::optional<std::pair<Megahertz, Megahertz>> memory_locked_;
    bool persistence_ = true;
    mutable std::deque<Result<Millijoules>> energy_queue_;
    mutable std::deque<Result<PowerReading>> power_queue_;
    mutable std::deque<Result<Celsius>> temperature_queue_;
    mutable std::array<std::deque<Failure>, static_cast<std::size_t>(Call::Count)> failures_;
    mutable std::array<std::atomic<unsigned>, static_cast<std::size_t>(Call::Count)> calls_{};
    mutable std::map<std::thread::id, std::array<unsigned, static_cast<std::size_t>(Call::Count)>> calls_by_thread_;
    std::atomic<bool> lost_{false};
    std::atomic<std::int64_t> latency_{0};
};

// Fake GPUs as a set, as a backend hands them over.
inline Gpus gpu_set(std::vector<std::unique_ptr<Gpu>> list) {
    GpuBackendInfo info;
    info.backend = "fake";
    info.physical_gpu_count = static_cast<unsigned>(list.size());
    return Gpus(std::move(list), {}, {}, std::move(info));
}

// `count` fake GPUs (or GPUs derived from it) as a set; `each` scripts each
// one before it is handed over.
template <class Fake = FakeGpu, class Script = void (*)(Fake&)>
Gpus fake_gpus(unsigned count, Script each = [](Fake&) {}) {
    std::vector<std::unique_ptr<Gpu>> list;
    for (unsigned i = 0; i < count; ++i) {
        auto gpu = std::make_unique<Fake>(i);
        each(*gpu);
        list.push_back(std::move(gpu));
    }
    return gpu_set(std::move(list));
}

// The same on one ManualClock: the test moves time for every GPU at once.
template <class Script = void (*)(FakeGpu&)>
Gpus fake_gpus_on(
    const std::shared_ptr<ManualClock>& clock, unsigned count, Script each = [](FakeGpu&) {}) {
    std::vector<std::unique_ptr<Gpu>> list;
    for (unsigned i = 0; i < count; ++i) {
        auto gpu = std::make_unique<FakeGpu>(i, clock);
        each(*gpu);
        list.push_back(std::move(gpu));
    }
    return gpu_set(std::move(list));
}

// GPU `index` of a set made by fake_gpus, to script it or read its calls.
inline FakeGpu& fake(const Gpus& gpus, std::size_t index) { return dynamic_cast<FakeGpu&>(gpus[index]); }

}  // namespace zeus::testing
