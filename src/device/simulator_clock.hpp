// The GPU simulator's own clock, for simulated GPUs on its virtual clock:
// there, time moves only when the simulation moves it, so the length of an
// energy window, and the age of a counter reading, must be read from the
// simulator, not from the host.
#pragma once

#include <chrono>
#include <optional>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

class SimulatorClock {
  public:
    // nullopt for real GPUs and for the simulator on the real clock.
    [[nodiscard]] static std::optional<SimulatorClock> virtual_clock_of(const Gpus& gpus);

    // Simulator seconds since its state was created.
    [[nodiscard]] Seconds now() const;
    // The same instant on the scale of the simulator's NVML timestamps.
    [[nodiscard]] std::chrono::system_clock::time_point wall_now() const;

  private:
    using NowFunction = int (*)(double*);
    using UnixTimeFunction = int (*)(long long*);
    SimulatorClock(DynamicLibrary library, NowFunction read_now, UnixTimeFunction read_unix_time)
        : library_(std::move(library)), now_(read_now), unix_time_(read_unix_time) {}
    DynamicLibrary library_;  // keeps the functions valid
    NowFunction now_;
    UnixTimeFunction unix_time_;
};

}  // namespace zeus
