#include "zeus/monitor/measurement.hpp"

namespace zeus {

std::string_view to_string(EnergySource source) {
    switch (source) {
        case EnergySource::HardwareCounter: return "hardware counter";
        case EnergySource::IntegratedPower: return "integrated power";
        case EnergySource::InstantPowerApproximation: return "instant power approximation";
        case EnergySource::WindowLog: return "window log";
    }
    return "hardware counter";
}

Joules Measurement::total_gpu_energy() const { return gpu_energy.tally().total; }

Joules Measurement::total_energy() const {
    Joules total = total_gpu_energy();
    for (const auto& [index, value] : cpu_energy) total += value.energy;
    for (const auto& [index, value] : dram_energy) total += value.energy;
    return total;
}

bool Measurement::trustworthy() const {
    if (!warnings.empty()) return false;
    for (const auto* values : {&gpu_energy, &cpu_energy, &dram_energy}) {
        for (const auto& [index, value] : *values) {
            if (!value.warnings.empty()) return false;
        }
    }
    for (const auto& [name, value] : soc_energy) {
        if (!value.warnings.empty()) return false;
    }
    return true;
}

}  // namespace zeus
