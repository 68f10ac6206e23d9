#include "zeus/carbon/hourly_monitor_options.hpp"

#include <memory>

#include "device/simulator_clock.hpp"

namespace zeus::carbon {

std::function<std::chrono::system_clock::time_point()> window_clock(const Gpus& gpus) {
    if (auto sim = SimulatorClock::virtual_clock_of(gpus)) {
        auto clock = std::make_shared<SimulatorClock>(std::move(*sim));
        return [clock] { return clock->wall_now(); };
    }
    return [] { return std::chrono::system_clock::now(); };
}

}  // namespace zeus::carbon
