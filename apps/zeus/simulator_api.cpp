#include "simulator_api.hpp"

#include <fmt/format.h>
#include <zeus_sim/zeus_sim.h>

#include <string_view>

namespace zeus::cli {

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
    if (!api.run_work || !api.trace_profile_load || !api.trace_load_begin || !api.run_trace_work || !api.last_error) {
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

}  // namespace zeus::cli
