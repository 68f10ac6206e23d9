// A GPU that exists but could not be initialised. It keeps its place in the
// index order and answers every call with the initialisation error.
#pragma once

#include "zeus/device/gpu.hpp"

namespace zeus {

class UnavailableGpu final : public Gpu {
  public:
    UnavailableGpu(GpuIdentity identity, Error error);

    [[nodiscard]] const GpuIdentity& identity() const override { return identity_; }
    [[nodiscard]] const GpuCapabilities& capabilities() const override { return capabilities_; }
    [[nodiscard]] Status status() const override { return error_; }

    [[nodiscard]] Result<Millijoules> total_energy() const override { return error_; }
    [[nodiscard]] Result<PowerReading> power(PowerDomain) const override { return error_; }
    [[nodiscard]] Result<Celsius> temperature() const override { return error_; }
    [[nodiscard]] Result<Milliwatts> power_limit() const override { return error_; }
    [[nodiscard]] Result<Milliwatts> default_power_limit() const override { return error_; }
    [[nodiscard]] Result<PowerLimitConstraints> power_limit_constraints() const override { return error_; }
    Status set_power_limit(Milliwatts) override { return error_; }
    Status reset_power_limit() override { return error_; }
    Status check_power_limit_control() override { return error_; }
    [[nodiscard]] Result<std::vector<Megahertz>> supported_memory_clocks() const override { return error_; }
    [[nodiscard]] Result<std::vector<Megahertz>> supported_graphics_clocks(std::optional<Megahertz>) const override {
        return error_;
    }
    Status set_gpu_locked_clocks(Megahertz, Megahertz) override { return error_; }
    Status reset_gpu_locked_clocks() override { return error_; }
    Status set_memory_locked_clocks(Megahertz, Megahertz) override { return error_; }
    Status reset_memory_locked_clocks() override { return error_; }
    [[nodiscard]] Result<bool> persistence_mode() const override { return error_; }
    Status set_persistence_mode(bool) override { return error_; }

  private:
    GpuIdentity identity_;
    GpuCapabilities capabilities_;
    Error error_;
};

}  // namespace zeus
