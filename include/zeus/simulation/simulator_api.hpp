// The GPU simulator's C API (sim/include/zeus_sim/zeus_sim.h), from the
// library the simulated GPUs were opened with: its virtual clock (for the
// monitors, src/device/simulator_clock.cpp), ground truth (`zeus demo`) and
// workloads (`zeus profile --simulated-work`, `zeus power-limit|perseus
// simulate`). Part of libzeus, so that every user reaches it the same way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "zeus/device/gpus.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/error.hpp"

namespace zeus::simulation {

// One of the simulator's GPU models (zeusSimPresetInfo).
struct SimulatorPreset {
    std::string key;                       // "RTX6000"
    std::string name;                      // "Quadro RTX 6000"
    std::vector<std::string> trace_names;  // "rtx6000", "quadrortx6000"
    double limit_min_w = 0, limit_max_w = 0, limit_default_w = 0;
    bool energy_counter = true;
};

// The presets of the simulator library at `library_path` (it need not be open).
[[nodiscard]] Result<std::vector<SimulatorPreset>> simulator_presets(const std::string& library_path);

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
    // Loads, the virtual clock and ground truth (`zeus perseus simulate`).
    int (*load_begin)(unsigned gpu, double utilization, int* load) = nullptr;
    int (*load_end)(int load) = nullptr;
    int (*advance)(double seconds) = nullptr;
    int (*now)(double* seconds) = nullptr;
    int (*ground_truth_energy)(unsigned gpu, double* joules) = nullptr;
    int (*clock_mhz)(unsigned gpu, double* mhz) = nullptr;
    // The virtual clock: whether the simulation moves time (not the host), and
    // its time on the scale of the simulator's NVML timestamps.
    int (*is_virtual_clock)(int* is_virtual) = nullptr;
    int (*unix_time_us)(long long* unix_us) = nullptr;
    // A GPU's instant-power readings integrated as a sampler that saw every
    // refresh would. May be null: older simulators lack it.
    int (*power_sensor_energy)(unsigned gpu, double* joules, long long* refreshed_unix_us, double* reading_w) = nullptr;
};

// A simulator of this process only: `config_json` and the state file go in
// `directory` (ZEUS_SIM_CONFIG / ZEUS_SIM_STATE point there), and its GPUs
// are opened (the library from ZEUS_SIM_LIBRARY or next to libzeus).
[[nodiscard]] Result<Gpus> open_private_simulator(const std::filesystem::path& directory, const std::string& config_json);

}  // namespace zeus::simulation
