// The GPU simulator's own clock, for simulated GPUs on its virtual clock:
// there, time moves only when the simulation moves it, so the length of an
// energy window, and the age of a counter reading, must be read from the
// simulator, not from the host.
#pragma once

#include <chrono>
#include <optional>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/units.hpp"
#include "zeus/simulation/simulator_api.hpp"

namespace zeus {

class SimulatorClock {
  public:
    // nullopt for real GPUs and for the simulator on the real clock.
    [[nodiscard]] static std::optional<SimulatorClock> virtual_clock_of(const Gpus& gpus);

    // Simulator seconds since its state was created.
    [[nodiscard]] Seconds now() const;
    // The same instant on the scale of the simulator's NVML timestamps.
    [[nodiscard]] std::chrono::system_clock::time_point wall_now() const;

    // A GPU's (physical index) instant-power readings integrated as a
    // sampler that saw every refresh would: no thread can sample while the
    // virtual clock jumps, so the simulator keeps this sum for us.
    struct PowerSensorEnergy {
        Joules energy{0.0};                                  // up to `refreshed_at`
        std::chrono::system_clock::time_point refreshed_at;  // the latest refresh
        Watts reading{0.0};                                  // held since then
    };
    // nullopt when the simulator is too old to keep the sum, or the read failed.
    [[nodiscard]] std::optional<PowerSensorEnergy> power_sensor_energy(unsigned physical_gpu) const;

  private:
    explicit SimulatorClock(simulation::SimulatorApi api) : api_(std::move(api)) {}
    simulation::SimulatorApi api_;
};

}  // namespace zeus
