// A project outside this tree that uses an installed Zeus through find_package.
// The energy window is written as energy_monitor.hpp's header comment shows it,
// so that example keeps compiling.
#include <zeus/device/cpu.hpp>
#include <zeus/device/gpus.hpp>
#include <zeus/monitor/energy_monitor.hpp>
#include <zeus/version.hpp>

#include <iostream>

int main() {
    auto options = zeus::GpuOptions::from_environment();
    if (!options) return 2;
    zeus::Gpus gpus = zeus::Gpus::open(options.value());
    if (gpus.empty()) {
        std::cerr << "no GPUs: " << gpus.status().error().describe() << "\n";
        return 1;
    }
    for (const auto& gpu : gpus) {
        const zeus::Joules energy = gpu->total_energy().value();
        std::cout << "zeus " << ZEUS_VERSION_STRING << " GPU " << gpu->identity().index << " "
                  << gpu->identity().name << " " << energy.count() << " J\n";
    }
    zeus::Cpus cpus = zeus::Cpus::open(zeus::CpuOptions::from_environment().value());
    auto monitor = zeus::EnergyMonitor::open(gpus, &cpus, nullptr).value();
    monitor->begin_window("step").value();
    zeus::Measurement m = monitor->end_window("step").value();
    std::cout << "window of " << m.gpu_energy.size() << " GPUs\n";
    return 0;
}
