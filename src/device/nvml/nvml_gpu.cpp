#include "device/nvml/nvml_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "device/unavailable_gpu.hpp"

namespace zeus::nvml {
namespace {

GpuArchitecture to_architecture(nvmlDeviceArchitecture_t arch) {
    switch (arch) {
        case NVML_DEVICE_ARCH_KEPLER: return GpuArchitecture::Kepler;
        case NVML_DEVICE_ARCH_MAXWELL: return GpuArchitecture::Maxwell;
        case NVML_DEVICE_ARCH_PASCAL: return GpuArchitecture::Pascal;
        case NVML_DEVICE_ARCH_VOLTA: return GpuArchitecture::Volta;
        case NVML_DEVICE_ARCH_TURING: return GpuArchitecture::Turing;
        case NVML_DEVICE_ARCH_AMPERE: return GpuArchitecture::Ampere;
        case NVML_DEVICE_ARCH_ADA: return GpuArchitecture::Ada;
        case NVML_DEVICE_ARCH_HOPPER: return GpuArchitecture::Hopper;
        case NVML_DEVICE_ARCH_BLACKWELL: return GpuArchitecture::Blackwell;
        default: return GpuArchitecture::Unknown;
    }
}

bool older_than_volta(GpuArchitecture arch) {
    return arch == GpuArchitecture::Kepler || arch == GpuArchitecture::Maxwell || arch == GpuArchitecture::Pascal;
}

unsigned nvml_scope(PowerScope scope) {
    switch (scope) {
        case PowerScope::Gpu: return NVML_POWER_SCOPE_GPU;
        case PowerScope::Module: return NVML_POWER_SCOPE_MODULE;
        case PowerScope::Memory: return NVML_POWER_SCOPE_MEMORY;
    }
    return NVML_POWER_SCOPE_GPU;
}

// Errors that say "this cannot work here", as opposed to "it failed this time".
bool definitive_failure(int nvml_code) {
    switch (nvml_code) {
        case NVML_ERROR_TIMEOUT:
        case NVML_ERROR_NOT_READY:
        case NVML_ERROR_NO_DATA:
        case NVML_ERROR_GPU_IS_LOST:
        case NVML_ERROR_IN_USE:
        case NVML_ERROR_RESET_REQUIRED:
        case NVML_ERROR_IRQ_ISSUE:
        case NVML_ERROR_UNKNOWN: return false;
        default: return true;
    }
}

Capability capability_from(const Error& error) {
    return definitive_failure(error.vendor_code)
               ? Capability::no(error.describe())
               : Capability::unknown("could not be probed (" + error.describe() + "); reads will retry");
}

unsigned to_unsigned(std::int64_t v) { return static_cast<unsigned>(std::clamp<std::int64_t>(v, 0, 0xffffffffLL)); }

template <std::size_t N>
std::string read_string(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned), nvmlDevice_t handle) {
    std::array<char, N> buffer{};
    if (fn == nullptr || fn(handle, buffer.data(), static_cast<unsigned>(buffer.size())) != NVML_SUCCESS) return {};
    buffer.back() = '\0';
    return buffer.data();
}

}  // namespace

std::unique_ptr<Gpu> NvmlGpu::open(std::shared_ptr<Library> lib, unsigned physical_index, unsigned visible_index) {
    GpuIdentity identity;
    identity.index = visible_index;
    identity.physical_index = physical_index;
    nvmlDevice_t handle = nullptr;
    const nvmlReturn_t rc = lib->fn().device_get_handle_by_index(physical_index, &handle);
    if (rc != NVML_SUCCESS) {
        Error err = lib->error(rc, fmt::format("GPU {} (NVML index {}) failed to initialise", visible_index,
                                               physical_index));
        err.vendor_code = static_cast<int>(rc);
        return std::make_unique<UnavailableGpu>(std::move(identity), std::move(err));
    }
    const Functions& f = lib->fn();
    identity.name = read_string<NVML_DEVICE_NAME_V2_BUFFER_SIZE>(f.device_get_name, handle);
    identity.uuid = read_string<NVML_DEVICE_UUID_V2_BUFFER_SIZE>(f.device_get_uuid, handle);
    if (f.device_get_pci_info != nullptr) {
        nvmlPciInfo_t pci{};
        if (f.device_get_pci_info(handle, &pci) == NVML_SUCCESS) {
            pci.busId[sizeof(pci.busId) - 1] = '\0';
            identity.pci_bus_id = pci.busId;
        }
    }
    if (f.device_get_architecture != nullptr) {
        nvmlDeviceArchitecture_t arch = NVML_DEVICE_ARCH_UNKNOWN;
        if (f.device_get_architecture(handle, &arch) == NVML_SUCCESS) identity.architecture = to_architecture(arch);
    }
    std::unique_ptr<NvmlGpu> gpu(new NvmlGpu(std::move(lib), handle, std::move(identity)));
    gpu->probe_capabilities();
    return gpu;
}

NvmlGpu::NvmlGpu(std::shared_ptr<Library> lib, nvmlDevice_t handle, GpuIdentity identity)
    : lib_(std::move(lib)), handle_(handle), identity_(std::move(identity)) {}

Error NvmlGpu::fail(nvmlReturn_t rc, const char* function) const {
    return lib_->error(rc, fmt::format("{} on GPU {} (NVML index {})", function, identity_.index,
                                       identity_.physical_index));
}

Error NvmlGpu::not_supported(const Capability& capability, const char* what) const {
    return Error{ErrorCode::NotSupported, fmt::format("GPU {}: {} is not available: {}", identity_.index, what,
                                                      capability.reason),
                 {}, NVML_ERROR_NOT_SUPPORTED};
}

void NvmlGpu::probe_capabilities() {
    const Functions& f = lib_->fn();
    // Energy counter: Volta or newer, and the call must actually work.
    if (older_than_volta(identity_.architecture)) {
        capabilities_.energy_counter = Capability::no(fmt::format(
            "{} GPUs have no energy counter (it needs Volta or newer); energy must be integrated from power",
            to_string(identity_.architecture)));
    } else if (f.device_get_total_energy_consumption == nullptr) {
        capabilities_.energy_counter = Capability::no(Library::missing_function("nvmlDeviceGetTotalEnergyConsumption").describe());
    } else {
        auto energy = get(f.device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
        capabilities_.energy_counter = energy ? Capability::yes() : capability_from(energy.error());
        if (energy) energy_base_mj_ = *energy;
    }

    // Power domains: GPU scope first, then MODULE (Grace Hopper has only that).
    auto probe_domain = [&](unsigned field, std::initializer_list<PowerScope> scopes, const char* label) {
        PowerDomainCapability cap;
        if (f.device_get_field_values == nullptr) {
            cap.support = Capability::no(Library::missing_function("nvmlDeviceGetFieldValues").describe());
            return cap;
        }
        std::string reasons;
        bool definitive = true;
        for (PowerScope scope : scopes) {
            auto reading = read_power_field(field, nvml_scope(scope), label);
            if (reading) {
                cap.support = Capability::yes();
                cap.scope = scope;
                return cap;
            }
            definitive = definitive && definitive_failure(reading.error().vendor_code);
            if (!reasons.empty()) reasons += "; ";
            const Error& e = reading.error();
            reasons += fmt::format("{} scope: {}", to_string(scope),
                                   e.vendor_code != 0 ? lib_->error_string(static_cast<nvmlReturn_t>(e.vendor_code))
                                                      : e.message);
        }
        cap.support = definitive ? Capability::no(fmt::format("{} is not reported by this GPU ({})", label, reasons))
                                 : Capability::unknown(fmt::format("{} could not be probed ({})", label, reasons));
        return cap;
    };
    capabilities_.instant_power =
        probe_domain(NVML_FI_DEV_POWER_INSTANT, {PowerScope::Gpu, PowerScope::Module}, "instant power");
    // Drivers without power fields: on Volta and older, nvmlDeviceGetPowerUsage
    // is the instantaneous board power (newer boards return a 1 s average).
    if (!capabilities_.instant_power.support.supported && capabilities_.instant_power.support.definitive &&
        identity_.architecture <= GpuArchitecture::Volta && f.device_get_power_usage != nullptr &&
        get(f.device_get_power_usage, "nvmlDeviceGetPowerUsage").ok()) {
        capabilities_.instant_power = {Capability::yes(), PowerScope::Gpu};
        instant_via_power_usage_ = true;
    }
    capabilities_.average_power =
        probe_domain(NVML_FI_DEV_POWER_AVERAGE, {PowerScope::Gpu, PowerScope::Module}, "average power");
    capabilities_.memory_power = probe_domain(NVML_FI_DEV_POWER_AVERAGE, {PowerScope::Memory}, "memory power");

    auto constraints = power_limit_constraints();
    capabilities_.power_limit = constraints ? Capability::yes() : Capability::no(constraints.error().describe());

    if (capabilities_.energy_counter.supported) {
        // No power bound: NVML's counter is 64-bit and cannot wrap, and its
        // readings need not follow this process's clock (the simulator's
        // virtual time). Any decrease is a driver reload, counted as a reset.
        energy_ = std::make_unique<AccumulatedCounter>(
            CounterSpec{fmt::format("NVML energy counter of GPU {}", identity_.index), 0, 1e-3, Watts(0.0)},
            [lib = lib_, handle = handle_, index = identity_.index]() -> Result<std::uint64_t> {
                unsigned long long mj = 0;
                const nvmlReturn_t rc = lib->fn().device_get_total_energy_consumption(handle, &mj);
                if (rc != NVML_SUCCESS) {
                    return lib->error(rc, fmt::format("nvmlDeviceGetTotalEnergyConsumption on GPU {}", index));
                }
                return static_cast<std::uint64_t>(mj);
            });
        (void)energy_->read();  // the baseline: differences start here
    }
}

Result<Millijoules> NvmlGpu::total_energy() const {
    const Capability& cap = capabilities_.energy_counter;
    if (!cap.supported && cap.definitive) return not_supported(cap, "the energy counter");
    if (!energy_) {
        // Probing failed for a passing reason: read the raw counter directly.
        auto mj = get(lib_->fn().device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
        if (!mj) return mj.error();
        return Millijoules(static_cast<std::int64_t>(*mj));
    }
    auto total = energy_->read();
    if (!total) return total.error();
    return Millijoules(static_cast<std::int64_t>(energy_base_mj_) + static_cast<std::int64_t>(energy_->accumulator().total_counts()));
}

Result<EnergySnapshot> NvmlGpu::energy_snapshot() const {
    if (!energy_ || lib_->fn().device_get_field_values == nullptr) return Gpu::energy_snapshot();
    // Energy and instant power in one driver call, each with its refresh time.
    std::array<nvmlFieldValue_t, 2> values{};
    values[0].fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION;
    values[1].fieldId = NVML_FI_DEV_POWER_INSTANT;
    values[1].scopeId = nvml_scope(capabilities_.instant_power.scope);
    const int count = capabilities_.instant_power.support.supported && !instant_via_power_usage_ ? 2 : 1;
    const auto ticket = energy_->ticket();  // orders this read with other threads' reads of the counter
    const nvmlReturn_t rc = lib_->fn().device_get_field_values(handle_, count, values.data());
    if (rc != NVML_SUCCESS || values[0].nvmlReturn != NVML_SUCCESS ||
        values[0].valueType != NVML_VALUE_TYPE_UNSIGNED_LONG_LONG) {
        return Gpu::energy_snapshot();  // drivers without the energy field: plain counter read
    }
    // The total as of this reading, whichever thread fed a newer one
    // meanwhile: it goes with this reading's refresh time and power.
    const Joules total = energy_->record(static_cast<std::uint64_t>(values[0].value.ullVal), ticket);
    EnergySnapshot snapshot{Millijoules(static_cast<std::int64_t>(energy_base_mj_) + std::llround(total.count() * 1e3)),
                            std::nullopt, std::nullopt};
    if (values[0].timestamp != 0) {  // 0: none; below: a wall clock before 1970
        snapshot.refreshed_at = std::chrono::system_clock::time_point(std::chrono::microseconds(values[0].timestamp));
    }
    if (count == 2 && values[1].nvmlReturn == NVML_SUCCESS && values[1].valueType == NVML_VALUE_TYPE_UNSIGNED_INT) {
        snapshot.power = Milliwatts(values[1].value.uiVal);
    }
    return snapshot;
}

std::optional<CounterStats> NvmlGpu::energy_counter_stats() const {
    if (!energy_) return std::nullopt;
    return energy_->stats();
}

Result<PowerReading> NvmlGpu::read_power_field(unsigned field, unsigned scope, const char* what) const {
    nvmlFieldValue_t value{};
    value.fieldId = field;
    value.scopeId = scope;
    const nvmlReturn_t rc = lib_->fn().device_get_field_values(handle_, 1, &value);
    if (rc != NVML_SUCCESS) return fail(rc, "nvmlDeviceGetFieldValues");
    if (value.nvmlReturn != NVML_SUCCESS) {
        return lib_->error(value.nvmlReturn,
                           fmt::format("nvmlDeviceGetFieldValues({}) on GPU {}", what, identity_.index));
    }
    std::int64_t mw = 0;
    switch (value.valueType) {
        case NVML_VALUE_TYPE_UNSIGNED_INT: mw = value.value.uiVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_LONG: mw = static_cast<std::int64_t>(value.value.ulVal); break;
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: mw = static_cast<std::int64_t>(value.value.ullVal); break;
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: mw = value.value.sllVal; break;
        case NVML_VALUE_TYPE_SIGNED_INT: mw = value.value.siVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: mw = value.value.usVal; break;
        case NVML_VALUE_TYPE_DOUBLE: mw = static_cast<std::int64_t>(value.value.dVal); break;
        default:
            return Error{ErrorCode::Unknown,
                         fmt::format("GPU {}: NVML returned {} with unknown value type {}", identity_.index, what,
                                     static_cast<int>(value.valueType)),
                         {}, 0};
    }
    PowerReading reading{Milliwatts(mw), std::nullopt};
    if (value.timestamp != 0) {  // 0: none; below: a wall clock before 1970
        reading.refreshed_at = std::chrono::system_clock::time_point(std::chrono::microseconds(value.timestamp));
    }
    return reading;
}

Result<PowerReading> NvmlGpu::power(PowerDomain domain) const {
    const PowerDomainCapability& cap = capabilities_.power(domain);
    const std::string label(to_string(domain));
    if (!cap.support.supported && cap.support.definitive) return not_supported(cap.support, label.c_str());
    if (domain == PowerDomain::DeviceInstant && instant_via_power_usage_) {
        auto mw = get(lib_->fn().device_get_power_usage, "nvmlDeviceGetPowerUsage");
        if (!mw) return mw.error();
        return PowerReading{Milliwatts(*mw), std::nullopt};
    }
    const unsigned field =
        domain == PowerDomain::DeviceInstant ? NVML_FI_DEV_POWER_INSTANT : NVML_FI_DEV_POWER_AVERAGE;
    if (cap.support.supported) return read_power_field(field, nvml_scope(cap.scope), label.c_str());
    // Probing failed for a passing reason: try the scopes again, as the probe did.
    if (domain == PowerDomain::MemoryAverage) return read_power_field(field, NVML_POWER_SCOPE_MEMORY, label.c_str());
    auto gpu_scope = read_power_field(field, NVML_POWER_SCOPE_GPU, label.c_str());
    if (gpu_scope) return gpu_scope;
    return read_power_field(field, NVML_POWER_SCOPE_MODULE, label.c_str());
}

Result<Celsius> NvmlGpu::temperature() const {
    unsigned t = 0;
    auto s = call(lib_->fn().device_get_temperature, "nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU, &t);
    if (!s) return s.error();
    return Celsius(static_cast<double>(t));
}

Result<Megahertz> NvmlGpu::sm_clock() const {
    unsigned mhz = 0;
    auto s = call(lib_->fn().device_get_clock_info, "nvmlDeviceGetClockInfo", NVML_CLOCK_SM, &mhz);
    if (!s) return s.error();
    return Megahertz(static_cast<std::int64_t>(mhz));
}

Result<Milliwatts> NvmlGpu::power_limit() const {
    auto mw = get(lib_->fn().device_get_power_management_limit, "nvmlDeviceGetPowerManagementLimit");
    if (!mw) return mw.error();
    return Milliwatts(*mw);
}

Result<Milliwatts> NvmlGpu::default_power_limit() const {
    auto mw = get(lib_->fn().device_get_power_management_default_limit, "nvmlDeviceGetPowerManagementDefaultLimit");
    if (!mw) return mw.error();
    return Milliwatts(*mw);
}

Result<PowerLimitConstraints> NvmlGpu::power_limit_constraints() const {
    unsigned min_mw = 0;
    unsigned max_mw = 0;
    auto s = call(lib_->fn().device_get_power_management_limit_constraints,
                  "nvmlDeviceGetPowerManagementLimitConstraints", &min_mw, &max_mw);
    if (!s) return s.error();
    return PowerLimitConstraints{Milliwatts(min_mw), Milliwatts(max_mw)};
}

Status NvmlGpu::set_power_limit(Milliwatts limit) {
    if (auto range = power_limit_constraints(); range && (limit < range->min || limit > range->max)) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("power limit {} W is outside GPU {}'s range {}–{} W",
                                 quantity_cast<Watts>(limit).count(), identity_.index,
                                 quantity_cast<Watts>(range->min).count(), quantity_cast<Watts>(range->max).count()),
                     "choose a limit inside the range `zeus show-env` prints", NVML_ERROR_INVALID_ARGUMENT};
    }
    if (auto current = power_limit(); current && *current == limit) return {};  // nothing to change
    return call(lib_->fn().device_set_power_management_limit, "nvmlDeviceSetPowerManagementLimit",
                to_unsigned(limit.count()));
}

Status NvmlGpu::reset_power_limit() {
    auto fallback = default_power_limit();
    if (!fallback) return fallback.error();
    return set_power_limit(*fallback);
}

Status NvmlGpu::check_power_limit_control() {
    auto current = power_limit();
    if (!current) return current.error();
    return call(lib_->fn().device_set_power_management_limit, "nvmlDeviceSetPowerManagementLimit",
                to_unsigned(current->count()));
}

Result<std::vector<Megahertz>> NvmlGpu::supported_memory_clocks() const {
    auto fn = lib_->fn().device_get_supported_memory_clocks;
    if (fn == nullptr) return Library::missing_function("nvmlDeviceGetSupportedMemoryClocks");
    std::vector<unsigned> clocks(64);
    for (int attempt = 0; attempt < 4; ++attempt) {
        auto count = static_cast<unsigned>(clocks.size());
        const nvmlReturn_t rc = fn(handle_, &count, clocks.data());
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count > clocks.size()) {
            clocks.resize(count);
            continue;
        }
        if (rc != NVML_SUCCESS) return fail(rc, "nvmlDeviceGetSupportedMemoryClocks");
        std::vector<Megahertz> out;
        for (unsigned i = 0; i < count && i < clocks.size(); ++i) out.emplace_back(clocks[i]);
        return out;
    }
    return fail(NVML_ERROR_INSUFFICIENT_SIZE, "nvmlDeviceGetSupportedMemoryClocks");
}

Result<std::vector<Megahertz>> NvmlGpu::supported_graphics_clocks(std::optional<Megahertz> memory_clock) const {
    auto fn = lib_->fn().device_get_supported_graphics_clocks;
    if (fn == nullptr) return Library::missing_function("nvmlDeviceGetSupportedGraphicsClocks");
    if (!memory_clock) {
        auto memory = supported_memory_clocks();
        if (!memory) return memory.error();
        if (memory->empty()) {
            return Error{ErrorCode::NotSupported, fmt::format("GPU {} reports no memory clocks", identity_.index), {}, 0};
        }
        memory_clock = *std::max_element(memory->begin(), memory->end());
    }
    std::vector<unsigned> clocks(256);
    for (int attempt = 0; attempt < 4; ++attempt) {
        auto count = static_cast<unsigned>(clocks.size());
        const nvmlReturn_t rc = fn(handle_, to_unsigned(memory_clock->count()), &count, clocks.data());
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count > clocks.size()) {
            clocks.resize(count);
            continue;
        }
        if (rc != NVML_SUCCESS) return fail(rc, "nvmlDeviceGetSupportedGraphicsClocks");
        std::vector<Megahertz> out;
        for (unsigned i = 0; i < count && i < clocks.size(); ++i) out.emplace_back(clocks[i]);
        return out;
    }
    return fail(NVML_ERROR_INSUFFICIENT_SIZE, "nvmlDeviceGetSupportedGraphicsClocks");
}

Status NvmlGpu::check_clock_range(Megahertz min, Megahertz max, const char* kind) const {
    if (min.count() <= 0 || max.count() <= 0 || min > max) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("GPU {}: locked {} clock range {}–{} MHz is invalid", identity_.index, kind,
                                 min.count(), max.count()),
                     "give 0 < min <= max, in MHz, from the supported clocks `zeus show-env` lists", 0};
    }
    return {};
}

Status NvmlGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
    if (auto s = check_clock_range(min, max, "graphics"); !s) return s;
    return call(lib_->fn().device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks", to_unsigned(min.count()),
                to_unsigned(max.count()));
}

Status NvmlGpu::reset_gpu_locked_clocks() {
    return call(lib_->fn().device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks");
}

Status NvmlGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
    if (auto s = check_clock_range(min, max, "memory"); !s) return s;
    return call(lib_->fn().device_set_memory_locked_clocks, "nvmlDeviceSetMemoryLockedClocks",
                to_unsigned(min.count()), to_unsigned(max.count()));
}

Status NvmlGpu::reset_memory_locked_clocks() {
    return call(lib_->fn().device_reset_memory_locked_clocks, "nvmlDeviceResetMemoryLockedClocks");
}

Result<bool> NvmlGpu::persistence_mode() const {
    auto mode = get(lib_->fn().device_get_persistence_mode, "nvmlDeviceGetPersistenceMode");
    if (!mode) return mode.error();
    return *mode == NVML_FEATURE_ENABLED;
}

Status NvmlGpu::set_persistence_mode(bool enabled) {
    return call(lib_->fn().device_set_persistence_mode, "nvmlDeviceSetPersistenceMode",
                enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
}

}  // namespace zeus::nvml
