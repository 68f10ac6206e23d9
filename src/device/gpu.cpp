#include "zeus/device/gpu.hpp"

namespace zeus {

std::string_view to_string(GpuArchitecture arch) {
    switch (arch) {
        case GpuArchitecture::Kepler: return "Kepler";
        case GpuArchitecture::Maxwell: return "Maxwell";
        case GpuArchitecture::Pascal: return "Pascal";
        case GpuArchitecture::Volta: return "Volta";
        case GpuArchitecture::Turing: return "Turing";
        case GpuArchitecture::Ampere: return "Ampere";
        case GpuArchitecture::Ada: return "Ada";
        case GpuArchitecture::Hopper: return "Hopper";
        case GpuArchitecture::Blackwell: return "Blackwell";
        case GpuArchitecture::Unknown: return "unknown";
    }
    return "unknown";
}

std::string_view to_string(PowerScope scope) {
    switch (scope) {
        case PowerScope::Gpu: return "gpu";
        case PowerScope::Module: return "module";
        case PowerScope::Memory: return "memory";
    }
    return "gpu";
}

std::string_view to_string(PowerDomain domain) {
    switch (domain) {
        case PowerDomain::DeviceInstant: return "device_instant";
        case PowerDomain::DeviceAverage: return "device_average";
        case PowerDomain::MemoryAverage: return "memory_average";
    }
    return "device_instant";
}

const PowerDomainCapability& GpuCapabilities::power(PowerDomain domain) const {
    switch (domain) {
        case PowerDomain::DeviceInstant: return instant_power;
        case PowerDomain::DeviceAverage: return average_power;
        case PowerDomain::MemoryAverage: return memory_power;
    }
    return instant_power;
}

Result<Megahertz> Gpu::sm_clock() const {
    return Error{ErrorCode::NotSupported, "this GPU backend cannot read the SM clock", "", 0};
}

Status Gpu::reset_locked_clocks() {
    Status gpu = reset_gpu_locked_clocks();
    Status memory = reset_memory_locked_clocks();
    if (!gpu) return gpu;
    return memory;
}

}  // namespace zeus
