// An EnergyMonitor over a scripted clock: the test sets each device's power
// and moves time; energy is power × time, exact, so expected emissions and
// costs are sums the test can do itself.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::carbon::testing {

class ScriptedEnergy final : public EnergyMonitor {
  public:
    using TimePoint = std::chrono::system_clock::time_point;
    explicit ScriptedEnergy(TimePoint start) : now_(start) {}

    // Runs at the current powers for `d`.
    void run_for(std::chrono::duration<double> d) {
        std::lock_guard lock(mutex_);
        for (auto& [index, w] : gpu_watts_) gpu_joules_[index] += w * d.count();
        for (auto& [index, w] : cpu_watts_) cpu_joules_[index] += w * d.count();
        now_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    }
    void set_gpu_power(unsigned index, double watts) {
        std::lock_guard lock(mutex_);
        gpu_watts_[index] = watts;
        gpu_joules_.try_emplace(index, 0.0);
    }
    void set_cpu_power(unsigned index, double watts) {
        std::lock_guard lock(mutex_);
        cpu_watts_[index] = watts;
        cpu_joules_.try_emplace(index, 0.0);
    }
    [[nodiscard]] TimePoint now() const {
        std::lock_guard lock(mutex_);
        return now_;
    }
    void fail_next_end() {
        std::lock_guard lock(mutex_);
        fail_next_end_ = true;
    }

    Status begin_window(std::string_view name, bool, bool) override {
        std::lock_guard lock(mutex_);
        if (open_.contains(std::string(name))) return Error{ErrorCode::InvalidState, "open", "", 0};
        open_[std::string(name)] = Snapshot{now_, gpu_joules_, cpu_joules_};
        return {};
    }
    Result<Measurement> end_window(std::string_view name, bool, bool cancel) override {
        std::lock_guard lock(mutex_);
        const auto it = open_.find(std::string(name));
        if (it == open_.end()) return Error{ErrorCode::NotFound, "not open", "", 0};
        const Snapshot begin = it->second;
        open_.erase(it);
        if (fail_next_end_ && !cancel) {
            fail_next_end_ = false;
            return Error{ErrorCode::GpuLost, "scripted failure", "", 0};
        }
        Measurement m;
        m.start_time = WallClock::from_system(begin.time);
        m.time = Seconds(std::chrono::duration<double>(now_ - begin.time).count());
        for (const auto& [i, j] : gpu_joules_) {
            m.gpu_energy[i] = EnergyValue{Joules(cancel ? 0.0 : j - begin.gpu.at(i)), EnergySource::HardwareCounter, {}};
        }
        for (const auto& [i, j] : cpu_joules_) {
            m.cpu_energy[i] = EnergyValue{Joules(cancel ? 0.0 : j - begin.cpu.at(i)), EnergySource::HardwareCounter, {}};
        }
        return m;
    }
    std::vector<std::string> reset_windows() override { return {}; }
    [[nodiscard]] std::vector<std::string> open_windows() const override {
        std::lock_guard lock(mutex_);
        std::vector<std::string> names;
        for (const auto& [name, s] : open_) names.push_back(name);
        return names;
    }
    [[nodiscard]] const std::vector<unsigned>& gpu_indices() const override { return gpus_; }
    [[nodiscard]] const std::vector<unsigned>& cpu_indices() const override { return cpus_; }

  private:
    struct Snapshot {
        TimePoint time;
        std::map<unsigned, double> gpu, cpu;
    };
    mutable std::mutex mutex_;
    TimePoint now_;
    std::map<unsigned, double> gpu_watts_, cpu_watts_, gpu_joules_, cpu_joules_;
    std::map<std::string, Snapshot> open_;
    std::vector<unsigned> gpus_{0, 1};
    std::vector<unsigned> cpus_{0};
    bool fail_next_end_ = false;
};

}  // namespace zeus::carbon::testing
