// A project outside this tree that uses an installed Zeus through find_package.
#include <zeus/device/gpus.hpp>
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
    return 0;
}
