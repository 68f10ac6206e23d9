// A fake libamd_smi.so for the AMD backend's tests: the subset of AMD SMI's
// C ABI that Zeus uses (declared in src/device/amd/amdsmi_abi.h), over
// GPUs whose behaviour is set by environment variables read in amdsmi_init:
//
//   FAKE_AMDSMI_GPUS=N               number of GPUs (default 2), one per socket
//   FAKE_AMDSMI_ABI=24|25|26         library ABI: version and power_info layout (default 26)
//   FAKE_AMDSMI_INIT_STATUS=code     amdsmi_init fails with this status
//   FAKE_AMDSMI_POWER_W=200,300      constant power per GPU (a list's last entry repeats)
//   FAKE_AMDSMI_COUNTER=correct|stuck|wrong_scale|unsupported, per GPU
//   FAKE_AMDSMI_NAME=...             market name per GPU (default "AMD Instinct MI300X")
//   FAKE_AMDSMI_HIP_IDS=1,0          HIP id of each GPU in AMD SMI order (default identity)
//   FAKE_AMDSMI_ENUMERATION=hip|kfd|none  which HIP mapping source works (default hip)
//   FAKE_AMDSMI_BROKEN=1             GPUs (by AMD SMI index) that fail every call
//   FAKE_AMDSMI_NO_PERM=1            setters fail with AMDSMI_STATUS_NO_PERM
//   FAKE_AMDSMI_NO_AVERAGE=1         average_socket_power is N/A (0xFFFF)
//
// Energy is integrated exactly from the configured power; the fake_amdsmi_*
// functions expose that ground truth and change power to the tests.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device/amd/amdsmi_abi.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr float kResolutionUj = 15.2587890625F;  // 2^-16 J, as on MI100/MI200

enum class Mode { Correct, Stuck, WrongScale, Unsupported };

struct FakeGpu {
    double power_w = 200.0;
    double energy_at_change_uj = 1.0e9;  // counters do not start at 0
    Clock::time_point changed_at;
    std::uint64_t counter_offset = 0;   // subtracted after a reset
    Mode mode = Mode::Correct;
    std::string name;
    std::uint32_t hip_id = 0;
    bool broken = false;
    std::uint64_t cap_uw = 300000000, default_cap_uw = 300000000, min_cap_uw = 100000500, max_cap_uw = 400000000;
    std::uint64_t clk[2][2] = {{500, 2100}, {900, 1300}};  // [gfx, mem][min, max]
    std::uint32_t perf_level = 99;

    [[nodiscard]] double true_uj() const {
        return energy_at_change_uj + power_w * 1e6 * std::chrono::duration<double>(Clock::now() - changed_at).count();
    }
};

struct State {
    bool initialized = false;
    unsigned abi = 26;
    bool no_perm = false;
    bool no_average = false;
    std::string enumeration = "hip";
    std::vector<FakeGpu> gpus;
};
State g;

std::vector<std::string> env_list(const char* name) {
    std::vector<std::string> out;
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return out;
    std::string s(v);
    std::size_t start = 0;
    while (true) {
        auto comma = s.find(',', start);
        out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

std::string pick(const std::vector<std::string>& list, std::size_t i, const std::string& fallback) {
    if (list.empty()) return fallback;
    return i < list.size() ? list[i] : list.back();
}

FakeGpu* gpu_of(amdsmi_processor_handle h) {
    for (auto& gpu : g.gpus) {
        if (&gpu == h) return &gpu;
    }
    return nullptr;
}

// Common checks: initialised, a known handle, not broken.
amdsmi_status_t check(amdsmi_processor_handle h, FakeGpu*& gpu) {
    if (!g.initialized) return AMDSMI_STATUS_NOT_INIT;
    gpu = gpu_of(h);
    if (gpu == nullptr) return AMDSMI_STATUS_INVAL;
    if (gpu->broken) return AMDSMI_STATUS_DRM_ERROR;
    return AMDSMI_STATUS_SUCCESS;
}

void put_u32(void* buffer, std::size_t offset, std::uint32_t v) {
    std::memcpy(static_cast<unsigned char*>(buffer) + offset, &v, sizeof v);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_init(uint64_t flags) {
    if ((flags & AMDSMI_INIT_AMD_GPUS) == 0) return AMDSMI_STATUS_INVAL;
    if (const char* s = std::getenv("FAKE_AMDSMI_INIT_STATUS"); s != nullptr && *s != '\0') {
        const auto rc = static_cast<amdsmi_status_t>(std::strtoul(s, nullptr, 10));
        if (rc != AMDSMI_STATUS_SUCCESS) return rc;
    }
    g = State{};
    const char* n = std::getenv("FAKE_AMDSMI_GPUS");
    const unsigned count = n != nullptr ? static_cast<unsigned>(std::strtoul(n, nullptr, 10)) : 2U;
    if (const char* abi = std::getenv("FAKE_AMDSMI_ABI")) g.abi = static_cast<unsigned>(std::strtoul(abi, nullptr, 10));
    g.no_perm = std::getenv("FAKE_AMDSMI_NO_PERM") != nullptr;
    g.no_average = std::getenv("FAKE_AMDSMI_NO_AVERAGE") != nullptr;
    if (const char* e = std::getenv("FAKE_AMDSMI_ENUMERATION")) g.enumeration = e;
    const auto powers = env_list("FAKE_AMDSMI_POWER_W");
    const auto modes = env_list("FAKE_AMDSMI_COUNTER");
    const auto names = env_list("FAKE_AMDSMI_NAME");
    const auto hip_ids = env_list("FAKE_AMDSMI_HIP_IDS");
    const auto broken = env_list("FAKE_AMDSMI_BROKEN");
    g.gpus.resize(count);
    const auto now = Clock::now();
    for (unsigned i = 0; i < count; ++i) {
        FakeGpu& gpu = g.gpus[i];
        gpu.changed_at = now;
        gpu.power_w = std::strtod(pick(powers, i, "200").c_str(), nullptr);
        const std::string mode = pick(modes, i, "correct");
        gpu.mode = mode == "stuck"         ? Mode::Stuck
                   : mode == "wrong_scale" ? Mode::WrongScale
                   : mode == "unsupported" ? Mode::Unsupported
                                           : Mode::Correct;
        gpu.name = pick(names, i, "AMD Instinct MI300X");
        gpu.hip_id = static_cast<std::uint32_t>(std::strtoul(pick(hip_ids, i, std::to_string(i)).c_str(), nullptr, 10));
        for (const auto& b : broken) gpu.broken = gpu.broken || std::strtoul(b.c_str(), nullptr, 10) == i;
    }
    g.initialized = true;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_shut_down(void) {
    if (!g.initialized) return AMDSMI_STATUS_NOT_INIT;
    g.initialized = false;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_status_code_to_string(amdsmi_status_t status,
                                                                                    const char** out) {
    if (out == nullptr) return AMDSMI_STATUS_INVAL;
    switch (status) {
        case AMDSMI_STATUS_SUCCESS: *out = "AMDSMI_STATUS_SUCCESS: Call succeeded"; break;
        case AMDSMI_STATUS_INVAL: *out = "AMDSMI_STATUS_INVAL: Invalid parameters"; break;
        case AMDSMI_STATUS_NOT_SUPPORTED: *out = "AMDSMI_STATUS_NOT_SUPPORTED: Command not supported"; break;
        case AMDSMI_STATUS_DRM_ERROR: *out = "AMDSMI_STATUS_DRM_ERROR: Error when calling libdrm"; break;
        case AMDSMI_STATUS_NO_PERM: *out = "AMDSMI_STATUS_NO_PERM: Permission Denied"; break;
        case AMDSMI_STATUS_NOT_INIT: *out = "AMDSMI_STATUS_NOT_INIT: Device not initialized"; break;
        case AMDSMI_STATUS_DRIVER_NOT_LOADED: *out = "AMDSMI_STATUS_DRIVER_NOT_LOADED: Driver not loaded"; break;
        default: *out = "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred"; break;
    }
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_lib_version(void* version) {
    if (version == nullptr) return AMDSMI_STATUS_INVAL;
    // Works before amdsmi_init, as the real one does.
    // 24/25: {year, major, minor, release, build}; 26: {major, minor, release, build}.
    const char* env = std::getenv("FAKE_AMDSMI_ABI");
    const unsigned abi = env != nullptr ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 26U;
    put_u32(version, 0, abi);
    put_u32(version, 4, abi >= 26 ? 0 : 7);
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_socket_handles(uint32_t* count,
                                                                                amdsmi_socket_handle* sockets) {
    if (!g.initialized) return AMDSMI_STATUS_NOT_INIT;
    if (count == nullptr) return AMDSMI_STATUS_INVAL;
    if (sockets == nullptr) {
        *count = static_cast<uint32_t>(g.gpus.size());
        return AMDSMI_STATUS_SUCCESS;
    }
    const auto n = std::min<std::size_t>(*count, g.gpus.size());
    for (std::size_t i = 0; i < n; ++i) sockets[i] = &g.gpus[i];  // one GPU per socket
    *count = static_cast<uint32_t>(n);
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_processor_handles(
    amdsmi_socket_handle socket, uint32_t* count, amdsmi_processor_handle* handles) {
    if (!g.initialized) return AMDSMI_STATUS_NOT_INIT;
    if (count == nullptr || gpu_of(socket) == nullptr) return AMDSMI_STATUS_INVAL;
    if (handles == nullptr) {
        *count = 1;
        return AMDSMI_STATUS_SUCCESS;
    }
    if (*count < 1) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    handles[0] = socket;
    *count = 1;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle h, void* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    // ABI 24's struct is about 448 bytes: write all of it, as the real one does.
    std::memset(info, 0, 448);
    std::strncpy(static_cast<char*>(info), gpu->name.c_str(), 255);
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle h,
                                                                                 unsigned int* length, char* uuid) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (length == nullptr || uuid == nullptr) return AMDSMI_STATUS_INVAL;
    if (*length < AMDSMI_GPU_UUID_SIZE) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    const auto i = static_cast<unsigned>(gpu - g.gpus.data());
    std::string s = "a" + std::to_string(i) + "ff74a1-0000-1000-80e0-b0d58e9c3cfb";
    s.resize(36, '0');
    std::memcpy(uuid, s.c_str(), s.size() + 1);
    *length = static_cast<unsigned>(s.size());
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_processor_handle h,
                                                                                amdsmi_bdf_t* bdf) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    bdf->as_uint = 0;
    bdf->fields.bus_number = 0xc1 + 0x10 * static_cast<unsigned>(gpu - g.gpus.data());
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_gpu_enumeration_info(amdsmi_processor_handle h,
                                                                                      void* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (g.enumeration != "hip") return AMDSMI_STATUS_NOT_SUPPORTED;
    std::memset(info, 0, 64);
    put_u32(info, 0, 128 + gpu->hip_id);  // drm_render
    put_u32(info, 4, gpu->hip_id);        // drm_card
    put_u32(info, 8, gpu->hip_id + 2);    // hsa_id
    put_u32(info, 12, gpu->hip_id);       // hip_id
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_gpu_kfd_info(amdsmi_processor_handle h, void* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (g.enumeration == "none") return AMDSMI_STATUS_NOT_SUPPORTED;
    std::memset(info, 0, 64);
    const std::uint64_t kfd_id = 1000 + gpu->hip_id;
    std::memcpy(info, &kfd_id, sizeof kfd_id);
    put_u32(info, 8, 2 + 3 * gpu->hip_id);  // node ids after the CPU nodes, not contiguous
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle h,
                                                                              uint64_t* accumulator, float* resolution,
                                                                              uint64_t* timestamp) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (gpu->mode == Mode::Unsupported) return AMDSMI_STATUS_NOT_SUPPORTED;
    double uj = gpu->true_uj();
    if (gpu->mode == Mode::Stuck) uj = 1.0e9;
    if (gpu->mode == Mode::WrongScale) uj *= 1000.0;
    *accumulator = static_cast<std::uint64_t>(std::floor(uj / kResolutionUj)) - gpu->counter_offset;
    *resolution = kResolutionUj;
    *timestamp = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle h, void* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    const auto watts = static_cast<std::uint32_t>(std::lround(gpu->power_w));
    const std::uint32_t average = g.no_average ? 0xFFFFU : watts;
    if (g.abi <= 24) {
        std::memset(info, 0, 68);
        put_u32(info, 0, watts);
        put_u32(info, 4, average);
    } else {
        std::memset(info, 0, g.abi == 25 ? 40 : 192);
        const std::uint64_t socket = watts;
        std::memcpy(info, &socket, sizeof socket);
        put_u32(info, 8, watts);
        put_u32(info, 12, average);
    }
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_power_cap_info(amdsmi_processor_handle h,
                                                                                uint32_t sensor,
                                                                                amdsmi_power_cap_info_t* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (sensor != 0 || info == nullptr) return AMDSMI_STATUS_INVAL;
    *info = amdsmi_power_cap_info_t{};
    info->power_cap = gpu->cap_uw;
    info->default_power_cap = gpu->default_cap_uw;
    info->min_power_cap = gpu->min_cap_uw;
    info->max_power_cap = gpu->max_cap_uw;
    info->dpm_cap = 2100;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_set_power_cap(amdsmi_processor_handle h, uint32_t sensor,
                                                                           uint64_t cap_uw) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (g.no_perm) return AMDSMI_STATUS_NO_PERM;
    if (sensor != 0 || cap_uw < gpu->min_cap_uw || cap_uw > gpu->max_cap_uw) return AMDSMI_STATUS_INVAL;
    gpu->cap_uw = cap_uw;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_clock_info(amdsmi_processor_handle h, uint32_t type,
                                                                            amdsmi_clk_info_t* info) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (type != AMDSMI_CLK_TYPE_GFX && type != AMDSMI_CLK_TYPE_MEM) return AMDSMI_STATUS_NOT_SUPPORTED;
    const int d = type == AMDSMI_CLK_TYPE_GFX ? 0 : 1;
    *info = amdsmi_clk_info_t{};
    info->min_clk = static_cast<uint32_t>(gpu->clk[d][0]);
    info->max_clk = static_cast<uint32_t>(gpu->clk[d][1]);
    info->clk = info->max_clk;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_set_gpu_clk_range(amdsmi_processor_handle h,
                                                                               uint64_t min_mhz, uint64_t max_mhz,
                                                                               uint32_t type) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (g.no_perm) return AMDSMI_STATUS_NO_PERM;
    if (type != AMDSMI_CLK_TYPE_GFX && type != AMDSMI_CLK_TYPE_MEM) return AMDSMI_STATUS_NOT_SUPPORTED;
    if (min_mhz > max_mhz) return AMDSMI_STATUS_INVAL;
    const int d = type == AMDSMI_CLK_TYPE_GFX ? 0 : 1;
    gpu->clk[d][0] = min_mhz;
    gpu->clk[d][1] = max_mhz;
    gpu->perf_level = 3;  // manual
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle h, uint32_t type,
                                                                             uint32_t metric, int64_t* celsius) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (metric != AMDSMI_TEMP_CURRENT) return AMDSMI_STATUS_NOT_SUPPORTED;
    *celsius = type == AMDSMI_TEMPERATURE_TYPE_HOTSPOT ? 65 : 50;
    return AMDSMI_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) amdsmi_status_t amdsmi_set_gpu_perf_level(amdsmi_processor_handle h,
                                                                                uint32_t level) {
    FakeGpu* gpu = nullptr;
    if (auto rc = check(h, gpu); rc != AMDSMI_STATUS_SUCCESS) return rc;
    if (g.no_perm) return AMDSMI_STATUS_NO_PERM;
    gpu->perf_level = level;
    return AMDSMI_STATUS_SUCCESS;
}

// ---- Test control (not part of AMD SMI) ----

__attribute__((visibility("default"))) double fake_amdsmi_true_energy_uj(uint32_t i) { return g.gpus.at(i).true_uj(); }

__attribute__((visibility("default"))) void fake_amdsmi_set_power_w(uint32_t i, double watts) {
    FakeGpu& gpu = g.gpus.at(i);
    gpu.energy_at_change_uj = gpu.true_uj();
    gpu.changed_at = Clock::now();
    gpu.power_w = watts;
}

// The counter restarts from (nearly) zero, as after a driver reload.
__attribute__((visibility("default"))) void fake_amdsmi_reset_counter(uint32_t i) {
    FakeGpu& gpu = g.gpus.at(i);
    gpu.counter_offset = static_cast<std::uint64_t>(std::floor(gpu.true_uj() / kResolutionUj));
}

__attribute__((visibility("default"))) uint64_t fake_amdsmi_power_cap_uw(uint32_t i) { return g.gpus.at(i).cap_uw; }

__attribute__((visibility("default"))) void fake_amdsmi_clock_range(uint32_t i, uint32_t type, uint64_t* min,
                                                                    uint64_t* max) {
    const int d = type == AMDSMI_CLK_TYPE_GFX ? 0 : 1;
    *min = g.gpus.at(i).clk[d][0];
    *max = g.gpus.at(i).clk[d][1];
}

__attribute__((visibility("default"))) uint32_t fake_amdsmi_perf_level(uint32_t i) { return g.gpus.at(i).perf_level; }

__attribute__((visibility("default"))) int fake_amdsmi_initialized(void) { return g.initialized ? 1 : 0; }

}  // extern "C"
