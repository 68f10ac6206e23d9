#include "device/simulator_clock.hpp"

namespace zeus {

std::optional<SimulatorClock> SimulatorClock::virtual_clock_of(const Gpus& gpus) {
    const GpuBackendInfo& info = gpus.backend_info();
    if (!info.simulated || info.library_path.empty()) return std::nullopt;
    auto library = DynamicLibrary::open(info.library_path);  // already loaded: a reference, not a second copy
    if (!library) return std::nullopt;
    using IsVirtualFunction = int (*)(int*);
    const auto is_virtual = library->function<IsVirtualFunction>("zeusSimIsVirtualClock");
    const auto read_now = library->function<NowFunction>("zeusSimNow");
    const auto read_unix_time = library->function<UnixTimeFunction>("zeusSimUnixTimeUs");
    int virtual_clock = 0;
    if (is_virtual == nullptr || read_now == nullptr || read_unix_time == nullptr || is_virtual(&virtual_clock) != 0 ||
        virtual_clock == 0) {
        return std::nullopt;
    }
    const auto read_sensor_energy = library->function<SensorEnergyFunction>("zeusSimPowerSensorEnergy");
    return SimulatorClock(std::move(library).value(), read_now, read_unix_time, read_sensor_energy);
}

Seconds SimulatorClock::now() const {
    double seconds = 0;
    now_(&seconds);
    return Seconds(seconds);
}

std::chrono::system_clock::time_point SimulatorClock::wall_now() const {
    long long unix_us = 0;
    unix_time_(&unix_us);
    return std::chrono::system_clock::time_point(std::chrono::microseconds(unix_us));
}

std::optional<SimulatorClock::PowerSensorEnergy> SimulatorClock::power_sensor_energy(unsigned physical_gpu) const {
    if (sensor_energy_ == nullptr) return std::nullopt;
    double joules = 0;
    long long refreshed_us = 0;
    double reading_w = 0;
    if (sensor_energy_(physical_gpu, &joules, &refreshed_us, &reading_w) != 0) return std::nullopt;
    return PowerSensorEnergy{Joules(joules),
                             std::chrono::system_clock::time_point(std::chrono::microseconds(refreshed_us)),
                             Watts(reading_w)};
}

}  // namespace zeus
