// The device sets behind zeus_native.device.get_gpus/get_cpus/get_soc.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zeus/device/cpu.hpp"
#include "zeus/device/gpus.hpp"
#include "zeus/device/soc.hpp"

namespace zeus::python {

struct GpuSet {
    Gpus gpus;
    GpuOptions options;               // what the set was opened with
    std::optional<Error> open_error;  // why there are no GPUs (options or backend)
    Gpu& gpu(long index) const;       // raises the original's error for an unknown index
};

struct CpuSet {
    Cpus cpus;
    std::optional<Error> open_error;
    Cpu& cpu(long index) const;
};

struct SocSet {
    std::unique_ptr<Soc> soc;
};

}  // namespace zeus::python
