// The set of visible GPUs. Opening it never throws for device problems: a
// missing library or driver gives an empty set with status() saying why, and
// a GPU that fails to initialise keeps its index but reports its error, so
// one bad GPU never hides the others.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/device/zeusd_client.hpp"
#include "zeus/device/gpu.hpp"
#include "zeus/platform/error.hpp"

namespace zeus {

struct GpuOptions {
    // NVML library to load; default "libnvidia-ml.so.1" through the loader path.
    std::optional<std::string> nvml_library;
    // Use the GPU simulator's NVML instead of the real one. Never implied.
    bool simulate = false;
    // Simulator library; default: found next to libzeus (see docs/simulator.md).
    std::optional<std::string> simulator_library;
    // The CUDA_VISIBLE_DEVICES value; nullopt = unset = every GPU.
    std::optional<std::string> visible_devices;
    // AMD: the AMD SMI library (default: libamd_smi.so through the ROCm search
    // order) and HIP_VISIBLE_DEVICES, which takes precedence over
    // CUDA_VISIBLE_DEVICES for AMD GPUs.
    std::optional<std::string> amdsmi_library;
    std::optional<std::string> hip_visible_devices;
    // When set, GPU settings (power limit, locked clocks, persistence mode)
    // are changed through this zeusd; readings stay local. See
    // docs/zeusd-client.md.
    std::optional<ZeusdConfig> zeusd;

    // ZEUS_NVML_LIBRARY, ZEUS_SIMULATE (1/true/yes), ZEUS_SIM_LIBRARY,
    // ZEUS_AMDSMI_LIBRARY, CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and
    // ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT / ZEUSD_TOKEN. A malformed
    // ZEUS_SIMULATE or ZEUSD_HOST_PORT is an error; empty paths count as unset.
    static Result<GpuOptions> from_environment();
};

struct GpuBackendInfo {
    std::string backend;       // "nvml", or "none"
    std::string library_path;  // what was loaded
    bool simulated = false;
    std::string driver_version;
    std::string nvml_version;
    std::optional<int> cuda_driver_version;  // e.g. 12040
    unsigned physical_gpu_count = 0;
    // Set when GPU settings are changed through zeusd (GpuOptions::zeusd):
    // its endpoint, and whether this process may change GPU settings there
    // (OK, or why not with the fix). Each GPU's own calls say the same.
    std::optional<std::string> zeusd_endpoint;
    Status zeusd_control;
};

class Gpus {
  public:
    static Gpus open(const GpuOptions& options);

    Gpus();
    Gpus(Gpus&&) noexcept;
    Gpus& operator=(Gpus&&) noexcept;
    ~Gpus();

    [[nodiscard]] std::size_t size() const { return gpus_.size(); }
    [[nodiscard]] bool empty() const { return gpus_.empty(); }
    // By visible index; throws ZeusError naming the valid range.
    [[nodiscard]] Gpu& operator[](std::size_t index) const;
    [[nodiscard]] Result<Gpu*> at(std::size_t index) const;
    [[nodiscard]] auto begin() const { return gpus_.begin(); }
    [[nodiscard]] auto end() const { return gpus_.end(); }

    // OK when the backend loaded; otherwise why there are no GPUs, with the fix.
    [[nodiscard]] const Status& status() const { return status_; }
    [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
    [[nodiscard]] const GpuBackendInfo& backend_info() const { return info_; }

    // For backends and tests: assemble a set from parts.
    Gpus(std::vector<std::unique_ptr<Gpu>> gpus, Status status, std::vector<std::string> warnings,
         GpuBackendInfo info, std::shared_ptr<void> keep_alive = {});

  private:
    // The GPUs of the local backend (NVML, else AMD SMI), before any zeusd relay.
    static Gpus open_local(const GpuOptions& options);

    std::vector<std::unique_ptr<Gpu>> gpus_;
    Status status_;
    std::vector<std::string> warnings_;
    GpuBackendInfo info_;
    std::shared_ptr<void> keep_alive_;  // the backend's library, outliving every Gpu
};

// Where the simulator's libnvidia-ml.so.1 is: `explicit_path` if given, else
// next to libzeus (lib/zeus-sim/). Error when it is not there, with the fix.
[[nodiscard]] Result<std::string> locate_simulator_library(const std::optional<std::string>& explicit_path);

}  // namespace zeus
