// An AMD GPU read and controlled through AMD SMI. Identity and capabilities
// are probed in open(); the energy counter is enabled only after
// open_gpus() has validated it against integrated power.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "device/amd/amd_library.hpp"
#include "zeus/device/counter_sampler.hpp"
#include "zeus/device/gpu.hpp"

namespace zeus::amd {

struct EnergySample {
    std::uint64_t counts = 0;
    double microjoules_per_count = 0.0;
    std::chrono::steady_clock::time_point taken_at;

    [[nodiscard]] double millijoules() const { return static_cast<double>(counts) * microjoules_per_count / 1000.0; }
};

class AmdGpu final : public Gpu {
  public:
    // An AmdGpu, or an UnavailableGpu carrying the reason when the GPU does
    // not answer. `physical_index` is the HIP index.
    static std::unique_ptr<Gpu> open(std::shared_ptr<Library> lib, amdsmi_processor_handle handle,
                                     unsigned physical_index, unsigned visible_index);

    [[nodiscard]] const GpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] const GpuCapabilities& capabilities() const override { return capabilities_; }
    [[nodiscard]] Status status() const override { return {}; }

    [[nodiscard]] Result<Millijoules> total_energy() const override;
    [[nodiscard]] std::optional<CounterStats> energy_counter_stats() const override { return counter_stats(); }
    [[nodiscard]] Result<PowerReading> power(PowerDomain domain) const override;
    [[nodiscard]] Result<Celsius> temperature() const override;

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
    Status reset_locked_clocks() override;

    [[nodiscard]] Result<bool> persistence_mode() const override;
    Status set_persistence_mode(bool enabled) override;

    // --- used by open_gpus() for validation ---
    // One raw energy-counter reading (no accumulation, no validation).
    [[nodiscard]] Result<EnergySample> read_energy_sample() const;
    // Average power, else instant power, else nullopt (as the original).
    [[nodiscard]] std::optional<Milliwatts> validation_power() const;
    // Energy counter verdict. Supported: reads go through an
    // AccumulatedCounter from here on.
    void set_energy_counter(Capability verdict, double microjoules_per_count);
    // Odd die of an MI250/MI250X: no power or energy of its own.
    void disable_power(const std::string& reason);
    [[nodiscard]] std::optional<CounterStats> counter_stats() const;

  private:
    AmdGpu(std::shared_ptr<Library> lib, amdsmi_processor_handle handle, GpuIdentity identity);
    void probe_capabilities();
    [[nodiscard]] Error fail(amdsmi_status_t rc, const char* function) const;
    [[nodiscard]] Error not_supported(const std::string& what, const std::string& reason) const;
    struct PowerInfo {
        std::optional<std::uint32_t> current_w;
        std::optional<std::uint32_t> average_w;
    };
    [[nodiscard]] Result<PowerInfo> read_power_info() const;
    [[nodiscard]] Result<amdsmi_power_cap_info_t> read_power_cap() const;
    [[nodiscard]] Result<std::vector<Megahertz>> clock_range(std::uint32_t clk_type, const char* what) const;
    [[nodiscard]] Status set_clock_range(std::uint32_t clk_type, Megahertz min, Megahertz max, const char* what);

    // One AMD SMI call on this GPU's handle, under the library's lock.
    template <class... Params, class... Args>
    [[nodiscard]] Status call(amdsmi_status_t (*fn)(amdsmi_processor_handle, Params...), const char* name,
                              Args... args) const {
        if (fn == nullptr) return Library::missing_function(name);
        amdsmi_status_t rc = AMDSMI_STATUS_SUCCESS;
        {
            auto guard = lib_->lock();
            rc = fn(handle_, args...);
        }
        if (rc != AMDSMI_STATUS_SUCCESS) return fail(rc, name);
        return {};
    }

    std::shared_ptr<Library> lib_;
    amdsmi_processor_handle handle_;
    GpuIdentity identity_;
    GpuCapabilities capabilities_;
    std::string power_disabled_reason_;  // MI250 odd die
    std::shared_ptr<AccumulatedCounter> counter_;
    double microjoules_per_count_ = 0.0;
};

}  // namespace zeus::amd
