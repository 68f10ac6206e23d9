// A GPU read and controlled through NVML. Identity and capabilities are
// probed once in open(); each reading is one NVML call on a cached handle.
#pragma once

#include <memory>

#include "device/nvml/nvml_library.hpp"
#include "zeus/device/counter_sampler.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/device/gpu_processes.hpp"

namespace zeus::nvml {

class NvmlGpu final : public Gpu, public GpuProcessQuery {
  public:
    // An NvmlGpu, or an UnavailableGpu carrying the reason when the handle
    // cannot be had. Never throws for device problems.
    static std::unique_ptr<Gpu> open(std::shared_ptr<Library> lib, unsigned physical_index, unsigned visible_index);

    [[nodiscard]] const GpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] const GpuCapabilities& capabilities() const override { return capabilities_; }
    [[nodiscard]] Status status() const override { return {}; }

    [[nodiscard]] Result<Millijoules> total_energy() const override;
    [[nodiscard]] std::optional<CounterStats> energy_counter_stats() const override;
    [[nodiscard]] Result<EnergySnapshot> energy_snapshot() const override;
    [[nodiscard]] Result<PowerReading> power(PowerDomain domain) const override;
    [[nodiscard]] Result<Celsius> temperature() const override;
    [[nodiscard]] Result<Megahertz> sm_clock() const override;
    // GpuProcessQuery (src/device/nvml/nvml_processes.cpp).
    [[nodiscard]] Result<std::vector<GpuProcess>> running_compute_processes() const override;
    [[nodiscard]] Result<ProcessUtilizationSamples> process_utilization(std::uint64_t last_seen_us) const override;

    [[nodiscard]] Result<Milliwatts> power_limit() const override;
    [[nodiscard]] Result<Milliwatts> default_power_limit() const override;
    [[nodiscard]] Result<PowerLimitConstraints> power_limit_constraints() const override;
    Status set_power_limit(Milliwatts limit) override;
    Status reset_power_limit() override;
    Status check_power_limit_control() override;

    [[nodiscard]] Result<std::vector<Megahertz>> supported_memory_clocks() const override;
    [[nodiscard]] Result<std::vector<Megahertz>> supported_graphics_clocks(
        std::optional<Megahertz> memory_clock) const override;
    Status set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
    Status reset_gpu_locked_clocks() override;
    Status set_memory_locked_clocks(Megahertz min, Megahertz max) override;
    Status reset_memory_locked_clocks() override;

    [[nodiscard]] Result<bool> persistence_mode() const override;
    Status set_persistence_mode(bool enabled) override;

  private:
    NvmlGpu(std::shared_ptr<Library> lib, nvmlDevice_t handle, GpuIdentity identity);
    void probe_capabilities();
    [[nodiscard]] Result<PowerReading> read_power_field(unsigned field, unsigned scope, const char* what) const;
    [[nodiscard]] Error fail(nvmlReturn_t rc, const char* function) const;
    [[nodiscard]] Error not_supported(const Capability& capability, const char* what) const;
    [[nodiscard]] Status check_clock_range(Megahertz min, Megahertz max, const char* kind) const;

    // One NVML call on this GPU's handle: a missing function or a failed call
    // becomes the typed Error naming `name`.
    template <class... Args>
    [[nodiscard]] Status call(nvmlReturn_t (*fn)(nvmlDevice_t, Args...), const char* name, Args... args) const {
        if (fn == nullptr) return Library::missing_function(name);
        const nvmlReturn_t rc = fn(handle_, args...);
        if (rc != NVML_SUCCESS) return fail(rc, name);
        return {};
    }
    // A getter with one output parameter.
    template <class T>
    [[nodiscard]] Result<T> get(nvmlReturn_t (*fn)(nvmlDevice_t, T*), const char* name) const {
        T out{};
        if (auto s = call(fn, name, &out); !s) return s.error();
        return out;
    }

    std::shared_ptr<Library> lib_;
    nvmlDevice_t handle_;
    GpuIdentity identity_;
    GpuCapabilities capabilities_;
    bool instant_via_power_usage_ = false;  // old drivers without power fields
    // NVML's 64-bit mJ counter never wraps, but it restarts when the driver
    // reloads; the accumulator keeps total_energy() monotonic across that.
    std::unique_ptr<AccumulatedCounter> energy_;
    std::uint64_t energy_base_mj_ = 0;  // the raw counter at the first read
};

}  // namespace zeus::nvml
