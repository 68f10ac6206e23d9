// One GPU, whatever its vendor or backend. Every reading is a Result: either a
// value in unit-carrying types or an Error saying why not (never a silent 0).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/device/counter_accumulator.hpp"
#include "zeus/platform/error.hpp"
#include "zeus/platform/units.hpp"

namespace zeus {

enum class GpuArchitecture { Kepler, Maxwell, Pascal, Volta, Turing, Ampere, Ada, Hopper, Blackwell, Unknown };
[[nodiscard]] std::string_view to_string(GpuArchitecture arch);

// Which part of the board a power reading covers. MODULE is GPU + CPU + memory
// on Grace Hopper, where the GPU scope is not available.
enum class PowerScope { Gpu, Module, Memory };
[[nodiscard]] std::string_view to_string(PowerScope scope);

// The three power readings Zeus knows (names as in the original's PowerMonitor).
enum class PowerDomain { DeviceInstant, DeviceAverage, MemoryAverage };
[[nodiscard]] std::string_view to_string(PowerDomain domain);

struct Capability {
    bool supported = false;
    std::string reason;  // why not, with the fix where there is one; empty when supported
    // False when the probe failed for a passing reason (timeout, GPU busy...):
    // "not supported" is then only what was seen at probe time, and reads retry.
    bool definitive = true;

    static Capability yes() { return {true, {}, true}; }
    static Capability no(std::string why) { return {false, std::move(why), true}; }
    static Capability unknown(std::string why) { return {false, std::move(why), false}; }
};

struct PowerDomainCapability {
    Capability support;
    PowerScope scope = PowerScope::Gpu;  // the scope that works (meaningful only when supported)
};

// Probed once when the GPU is opened.
struct GpuCapabilities {
    Capability energy_counter;  // cumulative energy in hardware (Volta or newer, and the call works)
    PowerDomainCapability instant_power;
    PowerDomainCapability average_power;
    PowerDomainCapability memory_power;
    Capability power_limit;  // reading the limit and its constraints

    [[nodiscard]] const PowerDomainCapability& power(PowerDomain domain) const;
};

struct GpuIdentity {
    unsigned index = 0;           // position among the visible GPUs (what CUDA calls it)
    unsigned physical_index = 0;  // the vendor library's index (what nvidia-smi calls it)
    std::string name;
    std::string uuid;
    std::string pci_bus_id;
    GpuArchitecture architecture = GpuArchitecture::Unknown;
};

struct PowerReading {
    Milliwatts power;
    // When the device last refreshed the value, if the backend tells (NVML field values do).
    std::optional<std::chrono::system_clock::time_point> refreshed_at;
};

// An energy reading with what is needed to place it in time: when the
// counter last refreshed (it lags real time by up to its update period, ~100
// ms on NVIDIA boards) and the power at that moment, so that the energy at an
// exact instant can be estimated as energy + power × (instant − refreshed_at).
struct EnergySnapshot {
    Millijoules energy;
    std::optional<std::chrono::system_clock::time_point> refreshed_at;
    std::optional<Milliwatts> power;
};

struct PowerLimitConstraints {
    Milliwatts min;
    Milliwatts max;
};

class Gpu {
  public:
    virtual ~Gpu() = default;
    Gpu() = default;
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    [[nodiscard]] virtual const GpuIdentity& identity() const = 0;
    [[nodiscard]] virtual const GpuCapabilities& capabilities() const = 0;
    // OK, or why this GPU cannot be used at all (it failed to initialise).
    [[nodiscard]] virtual Status status() const = 0;
    [[nodiscard]] bool available() const { return status().ok(); }

    // The energy counter as the vendor defines it (NVML: since the driver was
    // loaded), made monotonic by the counter accumulator: a reset or glitch
    // never makes it go backwards; energy_counter_stats() says whether one
    // happened. Differences of two readings are the energy in between.
    [[nodiscard]] virtual Result<Millijoules> total_energy() const = 0;
    // total_energy() plus its refresh time and the instant power, in one
    // device call where the backend can (NVML field values). By default only
    // the energy is filled in.
    [[nodiscard]] virtual Result<EnergySnapshot> energy_snapshot() const {
        auto energy = total_energy();
        if (!energy) return energy.error();
        return EnergySnapshot{*energy, std::nullopt, std::nullopt};
    }
    // Wraps, resets and glitches seen on the energy counter so far; nullopt
    // when the backend has no accumulated counter.
    [[nodiscard]] virtual std::optional<CounterStats> energy_counter_stats() const { return std::nullopt; }
    [[nodiscard]] virtual Result<PowerReading> power(PowerDomain domain) const = 0;
    [[nodiscard]] Result<PowerReading> instant_power() const { return power(PowerDomain::DeviceInstant); }
    [[nodiscard]] Result<PowerReading> average_power() const { return power(PowerDomain::DeviceAverage); }
    [[nodiscard]] Result<PowerReading> memory_power() const { return power(PowerDomain::MemoryAverage); }
    [[nodiscard]] virtual Result<Celsius> temperature() const = 0;
    // The current SM (streaming multiprocessor) clock. Backends that cannot
    // read it say NotSupported.
    [[nodiscard]] virtual Result<Megahertz> sm_clock() const;

    [[nodiscard]] virtual Result<Milliwatts> power_limit() const = 0;
    [[nodiscard]] virtual Result<Milliwatts> default_power_limit() const = 0;
    [[nodiscard]] virtual Result<PowerLimitConstraints> power_limit_constraints() const = 0;
    virtual Status set_power_limit(Milliwatts limit) = 0;
    virtual Status reset_power_limit() = 0;
    // Whether this process may change the power limit: re-applies the current
    // limit (so the GPU is left as it was) and reports what the driver said.
    virtual Status check_power_limit_control() = 0;

    [[nodiscard]] virtual Result<std::vector<Megahertz>> supported_memory_clocks() const = 0;
    // Graphics clocks supported at `memory_clock` (default: the highest memory clock).
    [[nodiscard]] virtual Result<std::vector<Megahertz>> supported_graphics_clocks(
        std::optional<Megahertz> memory_clock = std::nullopt) const = 0;
    virtual Status set_gpu_locked_clocks(Megahertz min, Megahertz max) = 0;
    virtual Status reset_gpu_locked_clocks() = 0;
    virtual Status set_memory_locked_clocks(Megahertz min, Megahertz max) = 0;
    virtual Status reset_memory_locked_clocks() = 0;
    // GPU and memory clocks back to the driver's control; both are attempted.
    virtual Status reset_locked_clocks();

    [[nodiscard]] virtual Result<bool> persistence_mode() const = 0;
    virtual Status set_persistence_mode(bool enabled) = 0;
};

}  // namespace zeus
