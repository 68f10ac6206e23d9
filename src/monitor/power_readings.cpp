#include "zeus/monitor/power_readings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace zeus {

CpuPowerSampler::CpuPowerSampler(const Cpus& cpus, std::vector<unsigned> indices)
    : cpus_(cpus), indices_(std::move(indices)), last_joules_(indices_.size()) {}

std::vector<std::optional<double>> CpuPowerSampler::sample(Timestamp now) {
    std::vector<std::optional<double>> watts(indices_.size());
    const double dt = last_time_ ? std::chrono::duration<double>(now - *last_time_).count() : 0.0;
    for (std::size_t k = 0; k < indices_.size(); ++k) {
        auto e = cpus_[indices_[k]].package_energy();
        std::optional<double> joules;
        if (e) joules = e->count();
        if (joules && last_joules_[k] && dt > 0) watts[k] = std::max(0.0, (*joules - *last_joules_[k]) / dt);
        last_joules_[k] = joules;
    }
    last_time_ = now;
    return watts;
}

PowerReadings::PowerReadings(const PowerMonitor* power_monitor, std::vector<unsigned> gpu_indices,
                             PowerDomain domain, const Cpus& cpus, std::vector<unsigned> cpu_indices)
    : power_monitor_(power_monitor),
      gpu_indices_(std::move(gpu_indices)),
      domain_(domain),
      cpu_sampler_(cpus, std::move(cpu_indices)) {}

void PowerReadings::start(Timestamp now) {
    cpu_sampler_.sample(now);
    last_read_ = now;
}

std::vector<std::optional<double>> PowerReadings::read(Timestamp now) {
    std::vector<std::optional<double>> watts;
    std::optional<std::map<unsigned, Watts>> gpu_power;
    if (power_monitor_ != nullptr) {
        if (auto p = power_monitor_->power(std::nullopt, domain_)) gpu_power = *p;
    }
    // The latest sample of a GPU that stopped answering (lost) is stale: the
    // monitor no longer covers now for it.
    std::optional<std::map<unsigned, Result<Joules>>> covered;
    if (gpu_power) {
        if (auto c = power_monitor_->energy_by_gpu(now, now, domain_)) covered = std::move(c).value();
    }
    for (unsigned i : gpu_indices_) {
        std::optional<double> w;
        if (gpu_power) {
            if (auto it = gpu_power->find(i); it != gpu_power->end()) w = it->second.count();
        }
        if (w && covered) {
            if (auto it = covered->find(i); it != covered->end() && !it->second.ok()) {
                w.reset();
                if (stale_.insert(i).second) {
                    warnings_.push_back(fmt::format("GPU {}: no power reading since its last sample (lost?); shown "
                                                    "as unavailable until it answers again",
                                                    i));
                }
            } else if (stale_.erase(i) > 0) {
                warnings_.push_back(fmt::format("GPU {}: power readings are back", i));
            }
        }
        watts.push_back(w);
    }
    for (const auto& w : cpu_sampler_.sample(now)) watts.push_back(w);
    last_read_ = now;
    return watts;
}

std::vector<std::string> PowerReadings::take_warnings() {
    std::vector<std::string> out;
    out.swap(warnings_);
    return out;
}

}  // namespace zeus
