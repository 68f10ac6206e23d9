// A scriptable CPU package (RAPL) in the test's own process, as FakeGpu is
// for GPUs: the package and its DRAM draw what the test says, their
// counters integrate it on the steady clock (moving in RAPL's ~1 ms steps
// when asked), and the test reads back the truth and who read the counters.
// Thread-safe: monitors read from their own threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "zeus/device/cpu.hpp"

namespace zeus::testing {

class FakeCpu final : public Cpu {
  public:
    using Clock = std::chrono::steady_clock;

    // A package drawing 100 W with a DRAM zone drawing 20 W, ceilings 300 / 60 W.
    explicit FakeCpu(unsigned index = 0, bool dram = true) : dram_zone_(dram), origin_(Clock::now()) {
        identity_.index = index;
        identity_.zone_index = index;
        identity_.zone_name = "package-" + std::to_string(index);
        identity_.path = "fake";
        segments_.push_back({origin_, Joules(0.0), Joules(0.0), Watts(100.0), Watts(20.0)});
    }

    // --- The script -------------------------------------------------------
    // Draws these from now on.
    void draw(Watts package, Watts dram = Watts(20.0)) {
        const std::lock_guard lock(mutex_);
        const auto now = Clock::now();
        const auto [p, d] = energy_at(now);
        segments_.push_back({now, p, d, package, dram});
    }
    void set_ceiling(CpuPowerCeiling ceiling) {
        const std::lock_guard lock(mutex_);
        ceiling_ = ceiling;
    }
    // The counters move only every `step` from the fake's creation (RAPL
    // updates about every millisecond); zero: continuously (the default).
    void update_every(std::chrono::nanoseconds step) {
        const std::lock_guard lock(mutex_);
        step_ = step;
    }
    // Every read fails (as an unreadable energy_uj does) until recover().
    void lose() { lost_ = true; }
    void recover() { lost_ = false; }

    // --- The truth and the calls --------------------------------------------
    // ∫ power dt from the fake's creation to `at` (not stepped): package, DRAM.
    [[nodiscard]] std::pair<Joules, Joules> true_energy(Clock::time_point at) const {
        const std::lock_guard lock(mutex_);
        return energy_at(at);
    }
    [[nodiscard]] unsigned reads() const { return reads_.load(); }
    // Reads made on `thread` (e.g. the test's own).
    [[nodiscard]] unsigned reads_on(std::thread::id thread) const {
        const std::lock_guard lock(mutex_);
        unsigned n = 0;
        for (const auto& id : readers_) n += id == thread ? 1 : 0;
        return n;
    }

    // --- Cpu ------------------------------------------------------------------
    const CpuIdentity& identity() const override { return identity_; }
    Status status() const override { return {}; }
    bool has_dram() const override { return dram_zone_; }
    Status dram_status() const override {
        if (dram_zone_) return {};
        return Error{ErrorCode::NotSupported, "the fake package has no DRAM zone", "", 0};
    }
    Result<CpuEnergy> total_energy() const override {
        const std::lock_guard lock(mutex_);
        ++reads_;
        if (readers_.size() < kMaxReaders) readers_.push_back(std::this_thread::get_id());
        if (lost_) return Error{ErrorCode::OperatingSystem, "fake energy_uj: Input/output error", "", 5};
        auto now = Clock::now();
        if (step_.count() > 0) now = origin_ + (now - origin_) / step_ * step_;
        const auto [package, dram] = energy_at(now);
        CpuEnergy e{package, std::nullopt, CounterStats{}, std::nullopt};
        if (dram_zone_) {
            e.dram = dram;
            e.dram_stats = CounterStats{};
        }
        return e;
    }
    Result<Joules> package_energy() const override {
        auto e = total_energy();
        if (!e) return e.error();
        return e->package;
    }
    Result<Joules> dram_energy() const override {
        if (!dram_zone_) return dram_status().error();
        auto e = total_energy();
        if (!e) return e.error();
        return *e->dram;
    }
    Result<CpuEnergy> accumulated() const override { return total_energy(); }
    CpuPowerCeiling power_ceiling() const override {
        const std::lock_guard lock(mutex_);
        return ceiling_;
    }

  private:
    static constexpr std::size_t kMaxReaders = 100000;

    // From `start` on, the package and DRAM draw these.
    struct Segment {
        Clock::time_point start;
        Joules package_at_start;
        Joules dram_at_start;
        Watts package_power;
        Watts dram_power;
    };
    [[nodiscard]] std::pair<Joules, Joules> energy_at(Clock::time_point at) const {
        auto it = std::find_if(segments_.rbegin(), segments_.rend(), [&](const Segment& s) { return s.start <= at; });
        if (it == segments_.rend()) return {Joules(0.0), Joules(0.0)};
        const Seconds since(at - it->start);
        return {it->package_at_start + it->package_power * since, it->dram_at_start + it->dram_power * since};
    }

    CpuIdentity identity_;
    bool dram_zone_;
    Clock::time_point origin_;
    mutable std::mutex mutex_;
    std::vector<Segment> segments_;
    CpuPowerCeiling ceiling_{Watts(300.0), Watts(60.0)};
    std::chrono::nanoseconds step_{0};
    std::atomic<bool> lost_{false};
    mutable std::atomic<unsigned> reads_{0};
    mutable std::vector<std::thread::id> readers_;
};

// `count` fake packages as a Cpus set (no sampler thread of its own).
inline Cpus fake_cpus(unsigned count, bool dram = true) {
    std::vector<std::unique_ptr<Cpu>> list;
    for (unsigned i = 0; i < count; ++i) list.push_back(std::make_unique<FakeCpu>(i, dram));
    return Cpus(std::move(list), {}, {}, "fake", nullptr);
}

// Package `index` of a set made by fake_cpus.
inline FakeCpu& fake(const Cpus& cpus, std::size_t index) { return dynamic_cast<FakeCpu&>(cpus[index]); }

}  // namespace zeus::testing
