#include "driver_latency.h"

#include <time.h>

#include <array>
#include <cmath>
#include <cstring>

#include "device/nvml/nvml_abi.h"

namespace zeus::sim {
namespace {

constexpr std::array<const char*, kDriverCallCount> kKeys = {
    "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetFieldValues",
    "nvmlDeviceGetTemperature",
    "queries",
    "setters",
};

// Per call, on the generation's driver path (docs/simulator.md, "Driver latency").
// Until this project measures its own (scripts/validate-hardware.sh writes
// docs/hardware.md on a lent GPU), the figures come from published measurements:
// pre-Volta from a Tesla K40m doing 2,743 nvmlDeviceGetPowerUsage calls per
// second through pynvml (wookayin/gpustat#76: 365 us per call, the Python
// binding's share a few microseconds), Volta and newer from an RTX 5080 reading
// temperature, utilisation, memory and power through pynvml in 0.09 ms
// (davidboulay/OpenKraken#3: about 22 us per call).
constexpr double kPreVoltaUs = 360.0;
constexpr double kVoltaAndNewerUs = 20.0;

double monotonic_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

const char* driver_call_key(DriverCall call) { return kKeys.at(static_cast<std::size_t>(call)); }

std::optional<DriverCall> driver_call_from_key(std::string_view key) {
  for (std::size_t i = 0; i < kKeys.size(); ++i) {
    if (key == kKeys[i]) return static_cast<DriverCall>(i);
  }
  return std::nullopt;
}

DriverLatency default_driver_latency(std::uint32_t architecture) {
  DriverLatency latency{};
  latency.set_all(architecture >= NVML_DEVICE_ARCH_VOLTA ? kVoltaAndNewerUs : kPreVoltaUs);
  return latency;
}

void wait_driver_latency(double us) {
  if (!(us > 0)) return;
  const double deadline = monotonic_us() + us;
  // Sleep through all but the last millisecond of a long latency; spin the rest.
  const double sleep_us = us - 1000.0;
  if (sleep_us > 0) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(sleep_us / 1e6);
    ts.tv_nsec = static_cast<long>(std::fmod(sleep_us, 1e6) * 1e3);
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  while (monotonic_us() < deadline) {
  }
}

}  // namespace zeus::sim
