// The GPU simulator's workload API (sim/include/zeus_sim/zeus_sim.h), from
// the library the simulated GPUs were opened with, for the commands that put
// work on them (`zeus profile --simulated-work`, `zeus power-limit simulate`).
#pragma once

#include <string>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::cli {

struct SimulatorApi {
    // The library is already loaded: opening it only takes a reference.
    // FunctionNotFound when it lacks a function below.
    [[nodiscard]] static Result<SimulatorApi> open(const Gpus& gpus);

    // "simulator: WHAT: <the simulator's last error>".
    [[nodiscard]] Error failure(const std::string& what) const;

    DynamicLibrary library;
    int (*run_work)(unsigned gpu, double units, double utilization, double* elapsed_s) = nullptr;
    int (*trace_profile_load)(const char* csv, const char* workload, int batch_size, const char* optimizer,
                              int* profile) = nullptr;
    int (*trace_load_begin)(unsigned gpu, int profile, int* load) = nullptr;
    int (*run_trace_work)(unsigned gpu, int profile, double epochs, double* elapsed_s) = nullptr;
    const char* (*last_error)() = nullptr;
};

}  // namespace zeus::cli
