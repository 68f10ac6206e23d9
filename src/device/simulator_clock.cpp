#include "device/simulator_clock.hpp"

namespace zeus {

std::optional<SimulatorClock> SimulatorClock::virtual_clock_of(const Gpus& gpus) {
    const GpuBackendInfo& info = gpus.backend_info();
    if (!info.simulated || info.library_path.empty()) return std::nullopt;
    auto api = simulation::SimulatorApi::open(gpus);  // already loaded: a reference, not a second copy
    int virtual_clock = 0;
    if (!api || api->is_virtual_clock(&virtual_clock) != 0 || virtual_clock == 0) return std::nullopt;
    return SimulatorClock(std::move(api).value());
}

Seconds SimulatorClock::now() const {
    double seconds = 0;
    api_.now(&seconds);
    return Seconds(seconds);
}

std::chrono::system_clock::time_point SimulatorClock::wall_now() const {
    long long unix_us = 0;
    api_.unix_time_us(&unix_us);
    return std::chrono::system_clock::time_point(std::chrono::microseconds(unix_us));
}

std::optional<SimulatorClock::PowerSensorEnergy> SimulatorClock::power_sensor_energy(unsigned physical_gpu) const {
    if (api_.power_sensor_energy == nullptr) return std::nullopt;
    double joules = 0;
    long long refreshed_us = 0;
    double reading_w = 0;
    if (api_.power_sensor_energy(physical_gpu, &joules, &refreshed_us, &reading_w) != 0) return std::nullopt;
    return PowerSensorEnergy{Joules(joules),
                             std::chrono::system_clock::time_point(std::chrono::microseconds(refreshed_us)),
                             Watts(reading_w)};
}

}  // namespace zeus
