// A scriptable SoC (a Jetson's INA3221 rails) in the test's own process:
// one rail per metric, each drawing what the test says; total_energy()
// integrates the power exactly on the steady clock, rails() gives the latest
// power. Counts reads per thread, as FakeCpu does. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zeus/device/soc.hpp"

namespace zeus::testing {

class FakeSoc final : public Soc {
  public:
    using Clock = std::chrono::steady_clock;

    // VDD_CPU 10 W, VDD_GPU 30 W, VDD_IN (total) 50 W.
    FakeSoc() : last_change_(Clock::now()) {}

    // The rail of `metric` draws `power` from now on.
    void draw(SocMetric metric, Watts power) {
        const std::lock_guard lock(mutex_);
        settle(Clock::now());
        power_[slot(metric)] = power;
    }
    // ∫ power dt of `metric`'s rail from creation to `at`.
    [[nodiscard]] Joules true_energy(SocMetric metric, Clock::time_point at) const {
        const std::lock_guard lock(mutex_);
        return energy_at(slot(metric), at);
    }
    [[nodiscard]] unsigned reads_on(std::thread::id thread) const {
        const std::lock_guard lock(mutex_);
        unsigned n = 0;
        for (const auto& id : readers_) n += id == thread ? 1 : 0;
        return n;
    }
    [[nodiscard]] unsigned reads() const { return reads_.load(); }

    std::string_view name() const override { return "fake SoC"; }
    Status status() const override { return {}; }
    SocEnergySource energy_source() const override { return SocEnergySource::IntegratedPower; }
    std::vector<SocMetricInfo> metrics() const override {
        std::vector<SocMetricInfo> out;
        for (std::size_t i = 0; i < kSocMetricCount; ++i) {
            out.push_back({kSocMetrics[i], Capability::yes(), {std::string(kRails[i])}});
        }
        return out;
    }
    Result<SocEnergy> total_energy() const override {
        const std::lock_guard lock(mutex_);
        ++reads_;
        if (readers_.size() < 100000) readers_.push_back(std::this_thread::get_id());
        const auto now = Clock::now();
        SocEnergy e;
        e.elapsed = Seconds(now - created_);
        for (std::size_t i = 0; i < kSocMetricCount; ++i) {
            const Joules energy = energy_at(i, now);
            e.metrics.push_back({kSocMetrics[i], energy});
            e.rails.push_back({std::string(kRails[i]), kSocMetrics[i], energy});
        }
        return e;
    }
    std::vector<SocRail> rails() const override {
        const std::lock_guard lock(mutex_);
        std::vector<SocRail> out;
        for (std::size_t i = 0; i < kSocMetricCount; ++i) {
            SocRail rail;
            rail.name = kRails[i];
            rail.metric = kSocMetrics[i];
            rail.source = "fake";
            rail.power = power_[i];
            rail.energy = energy_at(i, Clock::now());
            out.push_back(std::move(rail));
        }
        return out;
    }

  private:
    static constexpr std::size_t kSocMetricCount = std::size(kSocMetrics);
    static constexpr std::array<const char*, kSocMetricCount> kRails = {"VDD_CPU", "VDD_GPU", "VDD_IN"};

    static std::size_t slot(SocMetric metric) {
        for (std::size_t i = 0; i < kSocMetricCount; ++i) {
            if (kSocMetrics[i] == metric) return i;
        }
        return 0;
    }
    void settle(Clock::time_point now) {
        for (std::size_t i = 0; i < kSocMetricCount; ++i) settled_[i] = energy_at(i, now);
        last_change_ = now;
    }
    [[nodiscard]] Joules energy_at(std::size_t i, Clock::time_point at) const {
        return settled_[i] + power_[i] * Seconds(at - last_change_);
    }

    mutable std::mutex mutex_;
    Clock::time_point created_ = Clock::now();
    Clock::time_point last_change_;
    std::array<Joules, kSocMetricCount> settled_{Joules(0.0), Joules(0.0), Joules(0.0)};
    std::array<Watts, kSocMetricCount> power_{Watts(10.0), Watts(30.0), Watts(50.0)};
    mutable std::atomic<unsigned> reads_{0};
    mutable std::vector<std::thread::id> readers_;
};

}  // namespace zeus::testing
