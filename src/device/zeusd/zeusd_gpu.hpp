// A GPU whose settings are changed through zeusd while every reading stays
// local: a decorator over the local backend's Gpu (NVML or AMD SMI). Reads
// never depend on the daemon, so measuring works with any token (the
// original makes every GPU unusable without gpu-control, §12.1); control
// calls go to the daemon by its index for this GPU, and fail with the
// reason (no daemon, group disabled, scope missing, GPU unknown to the
// daemon) and the fix when the daemon cannot do them for this client.
#pragma once

#include <memory>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/device/gpu_processes.hpp"

namespace zeus::zeusd_backend {

// The local GPU's process list and samples are a reading too: they pass
// through (NotSupported when the local backend has none), so attribution
// works with settings relayed to the daemon.
class ZeusdGpu final : public Gpu, public GpuProcessQuery {
  public:
    // `control` is OK when `client` may change GPU `daemon_id`; otherwise
    // the error every control call returns (client may then be null).
    ZeusdGpu(std::unique_ptr<Gpu> local, std::shared_ptr<ZeusdClient> client, unsigned daemon_id, Status control);

    [[nodiscard]] const GpuIdentity& identity() const override { return local_->identity(); }
    [[nodiscard]] const GpuCapabilities& capabilities() const override { return local_->capabilities(); }
    [[nodiscard]] Status status() const override { return local_->status(); }

    [[nodiscard]] Result<Millijoules> total_energy() const override { return local_->total_energy(); }
    [[nodiscard]] Result<EnergySnapshot> energy_snapshot() const override { return local_->energy_snapshot(); }
    [[nodiscard]] std::optional<CounterStats> energy_counter_stats() const override {
        return local_->energy_counter_stats();
    }
    [[nodiscard]] Result<PowerReading> power(PowerDomain domain) const override { return local_->power(domain); }
    [[nodiscard]] Result<Celsius> temperature() const override { return local_->temperature(); }
    [[nodiscard]] Result<Megahertz> sm_clock() const override { return local_->sm_clock(); }
    [[nodiscard]] Result<Milliwatts> power_limit() const override { return local_->power_limit(); }
    [[nodiscard]] Result<Milliwatts> default_power_limit() const override { return local_->default_power_limit(); }
    [[nodiscard]] Result<PowerLimitConstraints> power_limit_constraints() const override {
        return local_->power_limit_constraints();
    }
    [[nodiscard]] Result<std::vector<Megahertz>> supported_memory_clocks() const override {
        return local_->supported_memory_clocks();
    }
    [[nodiscard]] Result<std::vector<Megahertz>> supported_graphics_clocks(
        std::optional<Megahertz> memory_clock) const override {
        return local_->supported_graphics_clocks(memory_clock);
    }
    [[nodiscard]] Result<bool> persistence_mode() const override { return local_->persistence_mode(); }
    [[nodiscard]] Result<std::vector<GpuProcess>> running_compute_processes() const override {
        return zeus::running_compute_processes(*local_);
    }
    [[nodiscard]] Result<ProcessUtilizationSamples> process_utilization(std::uint64_t last_seen_us) const override {
        return zeus::process_utilization(*local_, last_seen_us);
    }

    Status set_power_limit(Milliwatts limit) override;
    Status reset_power_limit() override;
    Status check_power_limit_control() override;
    Status set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
    Status reset_gpu_locked_clocks() override;
    Status set_memory_locked_clocks(Megahertz min, Megahertz max) override;
    Status reset_memory_locked_clocks() override;
    Status reset_locked_clocks() override;  // the daemon's own route: both resets attempted there
    Status set_persistence_mode(bool enabled) override;

    [[nodiscard]] unsigned daemon_id() const { return daemon_id_; }
    [[nodiscard]] const Status& control_status() const { return control_; }

  private:
    // OK when a control call may be relayed; otherwise why not, naming this GPU and `what`.
    [[nodiscard]] Status may_control(std::string_view what) const;

    std::unique_ptr<Gpu> local_;
    std::shared_ptr<ZeusdClient> client_;
    unsigned daemon_id_;
    Status control_;
};

// Wraps every GPU of a local set so control goes through the daemon at
// `config`: NVML GPUs by their NVML index (CUDA_VISIBLE_DEVICES already
// resolved), other backends by PCI address as the daemon lists them. Adds
// a warning when the daemon cannot be used for control; reads never fail
// because of the daemon. Returns the control status for the whole set.
struct ZeusdControlSummary {
    std::string endpoint;
    Status control;  // OK, or why GPUs cannot be controlled through the daemon
};
[[nodiscard]] ZeusdControlSummary relay_control(std::vector<std::unique_ptr<Gpu>>& gpus, const std::string& backend,
                                                const ZeusdConfig& config, std::vector<std::string>& warnings);

}  // namespace zeus::zeusd_backend
