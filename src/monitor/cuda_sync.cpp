// The built-in synchronisation: the CUDA runtime, loaded at run time so that
// Zeus needs no CUDA to build and runs where there is none.
#include <fmt/format.h>

#include <memory>

#include "zeus/monitor/energy_monitor.hpp"
#include "zeus/platform/dynamic_library.hpp"

namespace zeus {

Result<SyncFunction> cuda_sync() {
    std::optional<DynamicLibrary> lib;
    std::string tried;
    for (const char* name : {"libcudart.so", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so.13"}) {
        auto opened = DynamicLibrary::open(name);
        if (opened) {
            lib.emplace(std::move(opened).value());
            break;
        }
        tried += tried.empty() ? name : std::string(", ") + name;
    }
    if (!lib) {
        return Error{ErrorCode::LibraryNotFound, fmt::format("no CUDA runtime found (tried {})", tried),
                     "install the CUDA runtime, add its directory to LD_LIBRARY_PATH, or pass your own sync function",
                     0};
    }
    using GetDevice = int (*)(int*);
    using SetDevice = int (*)(int);
    using Synchronize = int (*)();
    auto get_device = lib->function<GetDevice>("cudaGetDevice");
    auto set_device = lib->function<SetDevice>("cudaSetDevice");
    auto synchronize = lib->function<Synchronize>("cudaDeviceSynchronize");
    if (get_device == nullptr || set_device == nullptr || synchronize == nullptr) {
        return Error{ErrorCode::FunctionNotFound, "the CUDA runtime lacks cudaSetDevice/cudaDeviceSynchronize",
                     "update the CUDA runtime", 0};
    }
    auto shared = std::make_shared<DynamicLibrary>(std::move(*lib));
    return SyncFunction([shared, get_device, set_device, synchronize](const std::vector<unsigned>& gpus) {
        // The caller's current device is theirs: put it back afterwards.
        int current = 0;
        const bool had_current = get_device(&current) == 0;
        for (unsigned gpu : gpus) {
            if (set_device(static_cast<int>(gpu)) == 0) synchronize();
        }
        if (had_current) set_device(current);
    });
}

}  // namespace zeus
