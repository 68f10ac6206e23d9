#include "device/unavailable_gpu.hpp"

namespace zeus {

UnavailableGpu::UnavailableGpu(GpuIdentity identity, Error error)
    : identity_(std::move(identity)), error_(std::move(error)) {
    const std::string why = "GPU unavailable: " + error_.message;
    capabilities_.energy_counter = Capability::no(why);
    capabilities_.instant_power.support = Capability::no(why);
    capabilities_.average_power.support = Capability::no(why);
    capabilities_.memory_power.support = Capability::no(why);
    capabilities_.power_limit = Capability::no(why);
}

}  // namespace zeus
