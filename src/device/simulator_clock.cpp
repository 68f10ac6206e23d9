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
    return SimulatorClock(std::move(library).value(), read_now, read_unix_time);
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

}  // namespace zeus
