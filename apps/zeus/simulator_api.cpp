#include "simulator_api.hpp"

#include <fmt/format.h>

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

Error SimulatorApi::failure(const std::string& what) const {
    return Error{ErrorCode::Unknown, fmt::format("simulator: {}: {}", what, last_error()), "", 0};
}

}  // namespace zeus::cli
