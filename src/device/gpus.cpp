#include "zeus/device/gpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "device/zeusd/zeusd_gpu.hpp"
#include "device/nvml/nvml_gpu.hpp"
#include "device/nvml/nvml_library.hpp"
#include "zeus/device/amd.hpp"
#include "zeus/device/visible_devices.hpp"
#include "zeus/platform/dynamic_library.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus {
namespace {

constexpr const char* kDefaultNvml = "libnvidia-ml.so.1";
constexpr const char* kSimulatorFile = "libnvidia-ml.so.1";

std::string query_string(nvmlReturn_t (*fn)(char*, unsigned)) {
    std::array<char, 96> buffer{};
    if (fn == nullptr || fn(buffer.data(), static_cast<unsigned>(buffer.size())) != NVML_SUCCESS) return {};
    buffer.back() = '\0';
    return buffer.data();
}

Gpus empty_set(Error why, GpuBackendInfo info, std::vector<std::string> warnings = {},
               std::shared_ptr<void> keep_alive = {}) {
    return Gpus({}, Status(std::move(why)), std::move(warnings), std::move(info), std::move(keep_alive));
}

// The driver's versions, for reports; those it cannot tell stay empty.
void describe_driver(const nvml::Functions& f, GpuBackendInfo& info) {
    info.driver_version = query_string(f.system_get_driver_version);
    info.nvml_version = query_string(f.system_get_nvml_version);
    if (f.system_get_cuda_driver_version != nullptr) {
        int v = 0;
        if (f.system_get_cuda_driver_version(&v) == NVML_SUCCESS) info.cuda_driver_version = v;
    }
}

// UUIDs are needed to resolve GPU-<uuid> entries; a GPU whose handle fails
// still counts for index entries, as it does for CUDA.
std::vector<PhysicalGpu> physical_gpus(const nvml::Functions& f, unsigned count) {
    std::vector<PhysicalGpu> physical;
    for (unsigned i = 0; i < count; ++i) {
        PhysicalGpu gpu{i, {}};
        nvmlDevice_t handle = nullptr;
        if (f.device_get_handle_by_index(i, &handle) == NVML_SUCCESS && f.device_get_uuid != nullptr) {
            std::array<char, NVML_DEVICE_UUID_V2_BUFFER_SIZE> uuid{};
            if (f.device_get_uuid(handle, uuid.data(), static_cast<unsigned>(uuid.size())) == NVML_SUCCESS) {
                uuid.back() = '\0';
                gpu.uuid = uuid.data();
            }
        }
        physical.push_back(std::move(gpu));
    }
    return physical;
}

Error no_gpu_selected(unsigned count, const std::optional<std::string>& visible_devices) {
    if (count == 0) {
        return Error{ErrorCode::NotFound, "NVML found no GPU on this machine",
                     "check `nvidia-smi`; to try Zeus without a GPU use --simulate", 0};
    }
    return Error{ErrorCode::NotFound,
                 fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides all {} GPUs", visible_devices.value_or(""), count),
                 "unset CUDA_VISIBLE_DEVICES or list the GPUs to use", 0};
}

}  // namespace

Result<GpuOptions> GpuOptions::from_environment() {
    GpuOptions options;
    // An empty path would make dlopen return the program itself: treat it as unset.
    auto non_empty = [](std::optional<std::string> v) { return v && !v->empty() ? v : std::nullopt; };
    options.nvml_library = non_empty(get_env("ZEUS_NVML_LIBRARY"));
    auto simulate = get_env_bool("ZEUS_SIMULATE", false);
    if (!simulate) return simulate.error();
    options.simulate = *simulate;
    options.simulator_library = non_empty(get_env("ZEUS_SIM_LIBRARY"));
    options.visible_devices = get_env("CUDA_VISIBLE_DEVICES");
    options.amdsmi_library = non_empty(get_env("ZEUS_AMDSMI_LIBRARY"));
    options.hip_visible_devices = get_env("HIP_VISIBLE_DEVICES");
    auto zeusd = ZeusdConfig::from_environment();
    if (!zeusd) return zeusd.error();
    options.zeusd = *zeusd;
    return options;
}

Result<std::string> locate_simulator_library(const std::optional<std::string>& explicit_path) {
    namespace fs = std::filesystem;
    if (explicit_path) {
        if (fs::exists(*explicit_path)) return *explicit_path;
        return Error{ErrorCode::LibraryNotFound,
                     fmt::format("the simulator library {} does not exist", *explicit_path),
                     "point ZEUS_SIM_LIBRARY at build/lib/zeus-sim/libnvidia-ml.so.1, or unset it", 0};
    }
    // Installed (and built) as <libdir>/zeus-sim/ next to libzeus itself.
    const std::string here = directory_of_loaded_object(reinterpret_cast<const void*>(&locate_simulator_library));
    std::vector<fs::path> candidates;
    if (!here.empty()) candidates.push_back(fs::path(here) / "zeus-sim" / kSimulatorFile);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back(exe.parent_path().parent_path() / "lib" / "zeus-sim" / kSimulatorFile);
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (const auto& candidate : candidates) {
        if (fs::exists(candidate, ec)) return candidate.string();
    }
    std::string looked;
    for (const auto& c : candidates) looked += (looked.empty() ? "" : ", ") + c.string();
    return Error{ErrorCode::LibraryNotFound, fmt::format("the GPU simulator library was not found (looked in {})", looked),
                 "build the zeus_sim_nvml target, or set ZEUS_SIM_LIBRARY to its libnvidia-ml.so.1", 0};
}

Gpus::Gpus() = default;
Gpus::Gpus(Gpus&&) noexcept = default;
Gpus& Gpus::operator=(Gpus&&) noexcept = default;
Gpus::~Gpus() = default;

Gpus::Gpus(std::vector<std::unique_ptr<Gpu>> gpus, Status status, std::vector<std::string> warnings,
           GpuBackendInfo info, std::shared_ptr<void> keep_alive)
    : gpus_(std::move(gpus)),
      status_(std::move(status)),
      warnings_(std::move(warnings)),
      info_(std::move(info)),
      keep_alive_(std::move(keep_alive)) {}

Result<Gpu*> Gpus::at(std::size_t index) const {
    if (index < gpus_.size()) return gpus_[index].get();
    if (gpus_.empty()) {
        return Error{ErrorCode::NotFound, fmt::format("GPU {} does not exist: no GPU is available", index),
                     status_.ok() ? std::string{} : status_.error().describe(), 0};
    }
    return Error{ErrorCode::NotFound,
                 fmt::format("GPU {} does not exist: {} GPU{} visible (indices 0 to {})", index, gpus_.size(),
                             gpus_.size() == 1 ? " is" : "s are", gpus_.size() - 1),
                 "GPU indices count visible GPUs, as CUDA does (see CUDA_VISIBLE_DEVICES)", 0};
}

Gpu& Gpus::operator[](std::size_t index) const { return *at(index).value(); }

Gpus Gpus::open(const GpuOptions& options) {
    Gpus gpus = open_local(options);
    if (!options.zeusd) return gpus;
    // Readings stay local (and work whatever the daemon allows); only the
    // settings go through the daemon, which has the privileges to change them.
    auto summary = zeusd_backend::relay_control(gpus.gpus_, gpus.info_.backend, *options.zeusd, gpus.warnings_);
    gpus.info_.zeusd_endpoint = std::move(summary.endpoint);
    gpus.info_.zeusd_control = std::move(summary.control);
    return gpus;
}

Gpus Gpus::open_local(const GpuOptions& options) {
    GpuBackendInfo info;
    info.backend = "none";
    std::string path = options.nvml_library && !options.nvml_library->empty() ? *options.nvml_library : kDefaultNvml;
    if (options.simulate) {
        info.simulated = true;
        auto sim = locate_simulator_library(options.simulator_library);
        if (!sim) return empty_set(sim.error(), info);
        path = *sim;
        info.simulated = true;
    }
    info.library_path = path;

    // One binary for NVIDIA, AMD and GPU-less machines: without a usable NVML,
    // try AMD SMI, unless the user named an NVML (or the simulator) explicitly.
    const bool may_try_amd = !options.simulate && !options.nvml_library;
    auto opened = nvml::Library::open(path);
    if (!opened) {
        std::vector<std::string> notes;
        if (may_try_amd) {
            Gpus amd_gpus = amd::open_gpus(options);
            if (!amd_gpus.empty() || options.amdsmi_library) return amd_gpus;
            if (!amd_gpus.status()) notes.push_back("AMD GPUs: " + amd_gpus.status().error().describe());
        }
        return empty_set(opened.error(), info, std::move(notes));
    }
    std::shared_ptr<nvml::Library> lib = std::move(opened).value();
    const nvml::Functions& f = lib->fn();
    info.backend = "nvml";
    info.simulated = info.simulated || lib->is_simulator();
    info.library_path = lib->path();
    describe_driver(f, info);

    unsigned count = 0;
    if (const nvmlReturn_t rc = f.device_get_count(&count); rc != NVML_SUCCESS) {
        return empty_set(lib->error(rc, "nvmlDeviceGetCount failed"), info, {}, lib);
    }
    info.physical_gpu_count = count;
    if (count == 0 && may_try_amd) {
        Gpus amd_gpus = amd::open_gpus(options);
        if (!amd_gpus.empty()) return amd_gpus;
    }

    auto selection = resolve_visible_devices(options.visible_devices, physical_gpus(f, count));
    if (!selection) return empty_set(selection.error(), info, {}, lib);

    std::vector<std::unique_ptr<Gpu>> gpus;
    for (unsigned visible = 0; visible < selection->physical_indices.size(); ++visible) {
        gpus.push_back(nvml::NvmlGpu::open(lib, selection->physical_indices[visible], visible));
    }
    Status status;
    if (gpus.empty()) status = no_gpu_selected(count, options.visible_devices);
    return Gpus(std::move(gpus), std::move(status), std::move(selection->warnings), std::move(info), lib);
}

}  // namespace zeus
