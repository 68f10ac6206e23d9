// zeus::amd::open_gpus: load AMD SMI, enumerate GPUs in HIP order, apply
// HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES, and validate every energy
// counter against integrated power in one shared window.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "device/amd/amd_gpu.hpp"
#include "device/amd/amd_library.hpp"
#include "zeus/device/amd.hpp"
#include "zeus/device/visible_devices.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus::amd {
namespace {

constexpr std::array<const char*, 4> kSonames = {"libamd_smi.so.26", "libamd_smi.so.25", "libamd_smi.so.24",
                                                 "libamd_smi.so"};
// Validation bounds, as the original: counter/expected in (0.1, 10), and no
// verdict when the expected energy is below 0.001 mJ.
constexpr double kMinRatio = 0.1;
constexpr double kMaxRatio = 10.0;
constexpr double kMinExpectedMillijoules = 0.001;

Gpus empty_set(Error why, GpuBackendInfo info, std::vector<std::string> warnings = {},
               std::shared_ptr<void> keep_alive = {}) {
    return Gpus({}, Status(std::move(why)), std::move(warnings), std::move(info), std::move(keep_alive));
}

// Newest /opt/rocm-X.Y.Z/lib by version, compared numerically.
std::optional<std::string> newest_versioned_rocm(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::pair<std::vector<unsigned>, fs::path>> found;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("rocm-", 0) != 0) continue;
        std::vector<unsigned> version;
        unsigned part = 0;
        bool digits = false;
        for (char c : name.substr(5)) {
            if (c >= '0' && c <= '9') {
                part = part * 10 + static_cast<unsigned>(c - '0');
                digits = true;
            } else if (c == '.' && digits) {
                version.push_back(part);
                part = 0;
                digits = false;
            } else {
                break;
            }
        }
        if (digits) version.push_back(part);
        if (!version.empty()) found.emplace_back(std::move(version), it->path() / "lib");
    }
    if (found.empty()) return std::nullopt;
    return std::max_element(found.begin(), found.end())->second.string();
}

struct HipOrder {
    std::vector<amdsmi_processor_handle> handles;  // position = HIP index
    std::vector<std::string> warnings;
};

bool read_u32(amdsmi_status_t (*fn)(amdsmi_processor_handle, void*), const Library& lib,
              amdsmi_processor_handle handle, std::size_t offset, std::uint32_t& out) {
    if (fn == nullptr) return false;
    std::array<unsigned char, ZEUS_AMDSMI_OUT_BUFFER_SIZE> buffer{};
    auto guard = lib.lock();
    if (fn(handle, buffer.data()) != AMDSMI_STATUS_SUCCESS) return false;
    std::memcpy(&out, buffer.data() + offset, sizeof out);
    return true;
}

// HIP numbers GPUs differently from AMD SMI. As the original: the HIP id from
// the enumeration info (ROCm 6.4+), else the KFD node order (ROCm 6.3); when
// neither is available for every GPU, AMD SMI's order with a warning.
HipOrder hip_order(const Library& lib, const std::vector<amdsmi_processor_handle>& handles) {
    const Functions& f = lib.fn();
    auto ordered_by = [&](auto fn, std::size_t offset) -> std::optional<std::vector<amdsmi_processor_handle>> {
        std::vector<std::pair<std::uint32_t, amdsmi_processor_handle>> keyed;
        for (auto* h : handles) {
            std::uint32_t key = 0;
            if (!read_u32(fn, lib, h, offset, key)) return std::nullopt;
            keyed.emplace_back(key, h);
        }
        std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 1; i < keyed.size(); ++i) {
            if (keyed[i].first == keyed[i - 1].first) return std::nullopt;  // not an order
        }
        std::vector<amdsmi_processor_handle> out;
        for (auto& [key, h] : keyed) out.push_back(h);
        return out;
    };
    HipOrder order;
    if (auto by_hip = ordered_by(f.get_gpu_enumeration_info, ZEUS_AMDSMI_ENUMERATION_HIP_ID_OFFSET)) {
        order.handles = std::move(*by_hip);
    } else if (auto by_kfd = ordered_by(f.get_gpu_kfd_info, ZEUS_AMDSMI_KFD_NODE_ID_OFFSET)) {
        order.handles = std::move(*by_kfd);
    } else {
        order.handles = handles;
        if (handles.size() > 1) {
            order.warnings.emplace_back(
                "AMD SMI could not tell the HIP numbering of the GPUs (amdsmi_get_gpu_enumeration_info and "
                "amdsmi_get_gpu_kfd_info failed); Zeus uses AMD SMI's order, which may differ from HIP's (ROCm 6.3 "
                "or newer fixes this)");
        }
    }
    return order;
}

std::string format_power(Milliwatts mw) { return fmt::format("{:g} W", quantity_cast<Watts>(mw).count()); }

struct PendingValidation {
    AmdGpu* gpu;
    std::optional<Milliwatts> power;  // at start-up
    EnergySample first;
};

// MI250/MI250X: the odd die of each pair reports no power; the even one
// reports both dies. True when `gpu` is an odd die, now without readings.
bool disable_silent_die(AmdGpu& gpu, double expected_mj, std::vector<std::string>& warnings) {
    const unsigned index = gpu.identity().index;
    const bool mi250 = gpu.identity().name.find("MI250") != std::string::npos;
    const unsigned hip = gpu.identity().physical_index;
    if (mi250 && hip % 2 == 1 && expected_mj < kMinExpectedMillijoules) {
        gpu.disable_power(fmt::format(
            "GPU {} (HIP {}) is the second die of a dual-die MI250/MI250X: AMD's driver reports the power of "
            "both dies on HIP {} only, so this die has no power or energy reading of its own; measure HIP {} "
            "(its numbers include both dies)",
            index, hip, hip - 1, hip - 1));
        return true;
    }
    if (mi250 && hip % 2 == 0 && expected_mj >= kMinExpectedMillijoules) {
        warnings.push_back(fmt::format(
            "GPU {} (HIP {}) is a dual-die MI250/MI250X: its power and energy are those of both dies (HIP {} and "
            "{}); work on either die is included and cannot be separated",
            index, hip, hip, hip + 1));
    }
    return false;
}

// Keeps the counter when the energy it counted over the window agrees with
// what the start-up power implies.
void judge_energy_counter(const PendingValidation& p, std::vector<std::string>& warnings) {
    AmdGpu& gpu = *p.gpu;
    const Milliwatts power = p.power.value_or(Milliwatts(0));
    auto second = gpu.read_energy_sample();
    if (!second) {
        gpu.set_energy_counter(Capability::no("could not be validated at start-up (" + second.error().describe() +
                                              "); integrate power instead"),
                               0.0);
        return;
    }
    const double seconds = std::chrono::duration<double>(second->taken_at - p.first.taken_at).count();
    const double expected_mj = static_cast<double>(power.count()) * seconds;  // mW x s
    const double measured_mj =
        second->counts >= p.first.counts
            ? static_cast<double>(second->counts - p.first.counts) * second->microjoules_per_count / 1000.0
            : -static_cast<double>(p.first.counts - second->counts) * second->microjoules_per_count / 1000.0;
    if (disable_silent_die(gpu, expected_mj, warnings)) return;

    if (!p.power || expected_mj < kMinExpectedMillijoules) {
        gpu.set_energy_counter(
            Capability::no(fmt::format(
                "the energy counter could not be validated: the GPU reported {} power at start-up, so {:.3f} mJ "
                "were expected in {:.3f} s and the counter ({:.3f} mJ) cannot be checked against it; integrate "
                "power instead",
                p.power ? format_power(*p.power) : std::string("no"), expected_mj, seconds, measured_mj)),
            0.0);
        return;
    }
    const double ratio = measured_mj / expected_mj;
    if (ratio > kMinRatio && ratio < kMaxRatio) {
        gpu.set_energy_counter(Capability::yes(), second->microjoules_per_count);
    } else {
        gpu.set_energy_counter(
            Capability::no(fmt::format(
                "the energy counter is inaccurate and was disabled: it measured {:.1f} mJ in {:.3f} s where "
                "{} of power implies {:.1f} mJ (ratio {:.3g}, accepted between {:g} and {:g}); a known AMD SMI "
                "problem on some GPUs and ROCm versions (ROCm/amdsmi#38); integrate power instead",
                measured_mj, seconds, format_power(power), expected_mj, ratio, kMinRatio, kMaxRatio)),
            0.0);
    }
}

// Watches every candidate counter over one shared window.
void validate_energy_counters(const std::vector<AmdGpu*>& gpus, std::chrono::milliseconds window,
                              std::vector<std::string>& warnings) {
    std::vector<PendingValidation> pending;
    for (AmdGpu* gpu : gpus) {
        auto first = gpu->read_energy_sample();
        if (!first) {
            gpu->set_energy_counter(definitive_failure(static_cast<amdsmi_status_t>(first.error().vendor_code))
                                        ? Capability::no(first.error().describe())
                                        : Capability::no("could not be validated at start-up (" +
                                                         first.error().describe() + "); integrate power instead"),
                                    0.0);
            continue;
        }
        pending.push_back({gpu, gpu->validation_power(), *first});
    }
    if (pending.empty()) return;
    std::this_thread::sleep_for(window);
    for (const auto& p : pending) judge_energy_counter(p, warnings);
}

// Every GPU of every socket, in AMD SMI's order.
Result<std::vector<amdsmi_processor_handle>> processor_handles(const Library& lib) {
    const Functions& f = lib.fn();
    std::vector<amdsmi_processor_handle> handles;
    auto guard = lib.lock();
    std::uint32_t sockets = 0;
    amdsmi_status_t rc = f.get_socket_handles(&sockets, nullptr);
    std::vector<amdsmi_socket_handle> socket_handles(sockets);
    if (rc == AMDSMI_STATUS_SUCCESS && sockets > 0) rc = f.get_socket_handles(&sockets, socket_handles.data());
    if (rc != AMDSMI_STATUS_SUCCESS) {
        guard.unlock();
        return lib.error(rc, "amdsmi_get_socket_handles failed");
    }
    socket_handles.resize(sockets);
    for (auto* socket : socket_handles) {
        std::uint32_t count = 0;
        rc = f.get_processor_handles(socket, &count, nullptr);
        std::vector<amdsmi_processor_handle> here(count);
        if (rc == AMDSMI_STATUS_SUCCESS && count > 0) rc = f.get_processor_handles(socket, &count, here.data());
        if (rc != AMDSMI_STATUS_SUCCESS) {
            guard.unlock();
            return lib.error(rc, "amdsmi_get_processor_handles failed");
        }
        here.resize(count);
        handles.insert(handles.end(), here.begin(), here.end());
    }
    return handles;
}

// The GPUs in HIP order, with UUIDs as "GPU-<AMD SMI uuid>" for GPU-... entries.
std::vector<PhysicalGpu> physical_gpus(const Library& lib, const std::vector<amdsmi_processor_handle>& hip_ordered) {
    const Functions& f = lib.fn();
    std::vector<PhysicalGpu> physical;
    for (unsigned i = 0; i < hip_ordered.size(); ++i) {
        PhysicalGpu gpu{i, {}};
        if (f.get_gpu_device_uuid != nullptr) {
            std::array<char, 128> uuid{};
            auto length = static_cast<unsigned>(uuid.size() - 1);
            auto guard = lib.lock();
            if (f.get_gpu_device_uuid(hip_ordered[i], &length, uuid.data()) == AMDSMI_STATUS_SUCCESS) {
                uuid.back() = '\0';
                std::string s = uuid.data();
                if (!s.empty()) gpu.uuid = s.rfind("GPU-", 0) == 0 ? s : "GPU-" + s;
            }
        }
        physical.push_back(std::move(gpu));
    }
    return physical;
}

// Why no GPU is left: AMD SMI found none, or the visible-devices variable hid them all.
Error no_gpu_error(const Library& lib, std::size_t found, const char* variable,
                   const std::optional<std::string>& value) {
    return found == 0
               ? Error{ErrorCode::NotFound, fmt::format("AMD SMI ({}) found no AMD GPU on this machine", lib.path()),
                       "check `amd-smi list` and that the amdgpu driver is loaded", 0}
               : Error{ErrorCode::NotFound,
                       fmt::format("{}=\"{}\" hides all {} AMD GPUs", variable, value.value_or(""), found),
                       fmt::format("unset {} or list the GPUs to use", variable), 0};
}

}  // namespace

std::vector<std::string> library_candidates(const GpuOptions& options) {
    if (options.amdsmi_library && !options.amdsmi_library->empty()) return {*options.amdsmi_library};
    namespace fs = std::filesystem;
    auto non_empty = [](std::optional<std::string> v) { return v && !v->empty() ? v : std::nullopt; };
    std::vector<std::string> dirs;
    bool loader_path = false;
    if (auto dir = non_empty(get_env("AMDSMI_LIB_DIR"))) {
        dirs.push_back(*dir);
    } else if (auto rocm = non_empty(get_env("ROCM_PATH"))) {
        dirs.push_back((fs::path(*rocm) / "lib").string());
    } else {
        dirs.emplace_back("/opt/rocm/lib");
        if (auto versioned = newest_versioned_rocm("/opt")) dirs.push_back(*versioned);
        loader_path = true;
    }
    std::vector<std::string> out;
    for (const auto& dir : dirs) {
        for (const char* so : kSonames) out.push_back((fs::path(dir) / so).string());
    }
    if (loader_path) {
        for (const char* so : kSonames) out.emplace_back(so);
    }
    return out;
}

std::optional<CounterStats> energy_counter_stats(const Gpu& gpu) { return gpu.energy_counter_stats(); }

Gpus open_gpus(const GpuOptions& options, const AmdOpenOptions& amd_options) {
    GpuBackendInfo info;
    info.backend = "none";
    const auto candidates = library_candidates(options);
    if (candidates.size() == 1) info.library_path = candidates.front();

    auto opened = Library::open(candidates);
    if (!opened) return empty_set(opened.error(), info);
    std::shared_ptr<Library> lib = std::move(opened).value();
    info.backend = "amdsmi";
    info.library_path = lib->path();
    std::vector<std::string> warnings = lib->warnings();

    auto found = processor_handles(*lib);
    if (!found) return empty_set(found.error(), info, warnings, lib);
    const std::vector<amdsmi_processor_handle>& handles = *found;
    info.physical_gpu_count = static_cast<unsigned>(handles.size());

    HipOrder order = hip_order(*lib, handles);
    warnings.insert(warnings.end(), order.warnings.begin(), order.warnings.end());
    const std::vector<PhysicalGpu> physical = physical_gpus(*lib, order.handles);

    const bool hip_set = options.hip_visible_devices.has_value();
    const char* variable = hip_set ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
    const std::optional<std::string>& value = hip_set ? options.hip_visible_devices : options.visible_devices;
    auto selection = value ? resolve_visible_devices(std::optional<std::string_view>(*value), physical, variable)
                           : resolve_visible_devices(std::nullopt, physical, variable);
    if (!selection) return empty_set(selection.error(), info, warnings, lib);
    warnings.insert(warnings.end(), selection->warnings.begin(), selection->warnings.end());

    std::vector<std::unique_ptr<Gpu>> gpus;
    std::vector<AmdGpu*> working;
    for (unsigned visible = 0; visible < selection->physical_indices.size(); ++visible) {
        const unsigned hip = selection->physical_indices[visible];
        auto gpu = AmdGpu::open(lib, order.handles[hip], hip, visible);
        if (auto* amd = dynamic_cast<AmdGpu*>(gpu.get())) working.push_back(amd);
        gpus.push_back(std::move(gpu));
    }
    validate_energy_counters(working, amd_options.validation_window, warnings);

    Status status;
    if (gpus.empty()) status = no_gpu_error(*lib, handles.size(), variable, value);
    return Gpus(std::move(gpus), std::move(status), std::move(warnings), std::move(info), lib);
}

}  // namespace zeus::amd
