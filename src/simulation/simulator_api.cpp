#include "zeus/simulation/simulator_api.hpp"

#include <fmt/format.h>
#include <zeus_sim/zeus_sim.h>

#include <stdlib.h>

#include <fstream>
#include <string_view>

namespace zeus::simulation {

Result<SimulatorApi> SimulatorApi::open(const Gpus& gpus) {
    const std::string& path = gpus.backend_info().library_path;
    auto library = DynamicLibrary::open(path);
    if (!library) return library.error();
    SimulatorApi api{std::move(library).value()};
    api.run_work = api.library.function<decltype(run_work)>("zeusSimRunWork");
    api.trace_profile_load = api.library.function<decltype(trace_profile_load)>("zeusSimTraceProfileLoad");
    api.trace_load_begin = api.library.function<decltype(trace_load_begin)>("zeusSimTraceLoadBegin");
    api.run_trace_work = api.library.function<decltype(run_trace_work)>("zeusSimRunTraceWork");
    api.last_error = api.library.function<decltype(last_error)>("zeusSimLastError");
    api.load_begin = api.library.function<decltype(load_begin)>("zeusSimLoadBegin");
    api.load_end = api.library.function<decltype(load_end)>("zeusSimLoadEnd");
    api.advance = api.library.function<decltype(advance)>("zeusSimAdvance");
    api.now = api.library.function<decltype(now)>("zeusSimNow");
    api.ground_truth_energy = api.library.function<decltype(ground_truth_energy)>("zeusSimGroundTruthEnergy");
    api.clock_mhz = api.library.function<decltype(clock_mhz)>("zeusSimClockMhz");
    api.is_virtual_clock = api.library.function<decltype(is_virtual_clock)>("zeusSimIsVirtualClock");
    api.unix_time_us = api.library.function<decltype(unix_time_us)>("zeusSimUnixTimeUs");
    api.power_sensor_energy = api.library.function<decltype(power_sensor_energy)>("zeusSimPowerSensorEnergy");
    if (!api.run_work || !api.trace_profile_load || !api.trace_load_begin || !api.run_trace_work || !api.last_error ||
        !api.load_begin || !api.load_end || !api.advance || !api.now || !api.ground_truth_energy || !api.clock_mhz ||
        !api.is_virtual_clock || !api.unix_time_us) {
        return Error{ErrorCode::FunctionNotFound, path + " lacks the simulator's workload API",
                     "rebuild the simulator (sim/) with this version of zeus", 0};
    }
    return api;
}

Result<std::vector<SimulatorPreset>> simulator_presets(const std::string& library_path) {
    auto library = DynamicLibrary::open(library_path);
    if (!library) return library.error();
    auto count = library->function<unsigned (*)()>("zeusSimPresetCount");
    auto info = library->function<zeusSimStatus_t (*)(unsigned, zeusSimPresetInfo_t*)>("zeusSimPresetInfo");
    if (count == nullptr || info == nullptr) {
        return Error{ErrorCode::FunctionNotFound, library_path + " lacks the simulator's preset API",
                     "rebuild the simulator (sim/) with this version of zeus", 0};
    }
    std::vector<SimulatorPreset> presets;
    for (unsigned i = 0, n = count(); i < n; ++i) {
        zeusSimPresetInfo_t p{};
        p.size = sizeof p;
        if (info(i, &p) != ZEUS_SIM_OK) continue;
        SimulatorPreset preset{p.key, p.name, {}, p.limit_min_w, p.limit_max_w, p.limit_default_w,
                               p.energy_counter_supported != 0};
        std::string_view names = p.trace_names;
        while (!names.empty()) {
            const auto comma = names.find(',');
            preset.trace_names.emplace_back(names.substr(0, comma));
            names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
        }
        presets.push_back(std::move(preset));
    }
    return presets;
}

Error SimulatorApi::failure(const std::string& what) const {
    return Error{ErrorCode::Unknown, fmt::format("simulator: {}: {}", what, last_error()), "", 0};
}

Result<Gpus> open_private_simulator(const std::filesystem::path& directory, const std::string& config_json) {
    const auto config = directory / "simulator.json";
    std::ofstream(config) << config_json;
    ::setenv("ZEUS_SIM_CONFIG", config.c_str(), 1);
    ::setenv("ZEUS_SIM_STATE", (directory / "state").c_str(), 1);
    auto environment = GpuOptions::from_environment();
    if (!environment) return environment.error();
    GpuOptions options;
    options.simulate = true;
    options.simulator_library = environment->simulator_library;
    Gpus gpus = Gpus::open(options);
    if (!gpus.status()) return gpus.status().error();
    return gpus;
}

}  // namespace zeus::simulation
