#include "device/amd/amd_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "device/unavailable_gpu.hpp"

namespace zeus::amd {
namespace {

using Buffer = std::array<unsigned char, ZEUS_AMDSMI_OUT_BUFFER_SIZE>;

std::uint32_t u32_at(const Buffer& buffer, std::size_t offset) {
    std::uint32_t v = 0;
    std::memcpy(&v, buffer.data() + offset, sizeof v);
    return v;
}

std::optional<std::uint32_t> watts_or_none(std::uint32_t w) {
    if (w == AMDSMI_POWER_NOT_AVAILABLE_16 || w == AMDSMI_POWER_NOT_AVAILABLE_32) return std::nullopt;
    return w;
}

Capability capability_from(const Error& error) {
    return definitive_failure(static_cast<amdsmi_status_t>(error.vendor_code))
               ? Capability::no(error.describe())
               : Capability::unknown("could not be probed (" + error.describe() + "); reads will retry");
}

// µW -> mW: a minimum rounds up and a maximum down, so that every value in
// the range in mW is accepted by the driver.
Milliwatts uw_floor(std::uint64_t uw) { return Milliwatts(static_cast<std::int64_t>(uw / 1000)); }
Milliwatts uw_ceil(std::uint64_t uw) { return Milliwatts(static_cast<std::int64_t>((uw + 999) / 1000)); }

}  // namespace

std::unique_ptr<Gpu> AmdGpu::open(std::shared_ptr<Library> lib, amdsmi_processor_handle handle,
                                  unsigned physical_index, unsigned visible_index) {
    GpuIdentity identity;
    identity.index = visible_index;
    identity.physical_index = physical_index;
    const Functions& f = lib->fn();
    // The PCI address is the one thing every working GPU answers; a GPU that
    // cannot give it is reported unavailable with AMD SMI's reason.
    if (f.get_gpu_device_bdf != nullptr) {
        amdsmi_bdf_t bdf{};
        amdsmi_status_t rc = AMDSMI_STATUS_SUCCESS;
        {
            auto guard = lib->lock();
            rc = f.get_gpu_device_bdf(handle, &bdf);
        }
        if (rc != AMDSMI_STATUS_SUCCESS) {
            Error err = lib->error(
                rc, fmt::format("GPU {} (HIP index {}) failed to initialise (amdsmi_get_gpu_device_bdf)",
                                visible_index, physical_index));
            return std::make_unique<UnavailableGpu>(std::move(identity), std::move(err));
        }
        identity.pci_bus_id =
            fmt::format("{:04x}:{:02x}:{:02x}.{:x}", static_cast<std::uint64_t>(bdf.fields.domain_number),
                        static_cast<unsigned>(bdf.fields.bus_number), static_cast<unsigned>(bdf.fields.device_number),
                        static_cast<unsigned>(bdf.fields.function_number));
    }
    {
        auto guard = lib->lock();
        if (f.get_gpu_asic_info != nullptr) {
            Buffer asic{};
            if (f.get_gpu_asic_info(handle, asic.data()) == AMDSMI_STATUS_SUCCESS) {
                const char* name = reinterpret_cast<const char*>(asic.data() + ZEUS_AMDSMI_ASIC_MARKET_NAME_OFFSET);
                identity.name.assign(name, strnlen(name, ZEUS_AMDSMI_ASIC_MARKET_NAME_MAX));
            }
        }
        if (f.get_gpu_device_uuid != nullptr) {
            std::array<char, 128> uuid{};
            auto length = static_cast<unsigned>(uuid.size() - 1);
            if (f.get_gpu_device_uuid(handle, &length, uuid.data()) == AMDSMI_STATUS_SUCCESS) {
                uuid.back() = '\0';
                identity.uuid = uuid.data();
            }
        }
    }
    if (identity.name.empty()) identity.name = "AMD GPU";
    std::unique_ptr<AmdGpu> gpu(new AmdGpu(std::move(lib), handle, std::move(identity)));
    gpu->probe_capabilities();
    return gpu;
}

AmdGpu::AmdGpu(std::shared_ptr<Library> lib, amdsmi_processor_handle handle, GpuIdentity identity)
    : lib_(std::move(lib)), handle_(handle), identity_(std::move(identity)) {}

Error AmdGpu::fail(amdsmi_status_t rc, const char* function) const {
    return lib_->error(rc, fmt::format("{} on GPU {} (HIP index {})", function, identity_.index,
                                       identity_.physical_index));
}

Error AmdGpu::not_supported(const std::string& what, const std::string& reason) const {
    return Error{ErrorCode::NotSupported, fmt::format("GPU {}: {} is not available: {}", identity_.index, what, reason),
                 {}, static_cast<int>(AMDSMI_STATUS_NOT_SUPPORTED)};
}

void AmdGpu::probe_capabilities() {
    // Until open_gpus() validates it.
    capabilities_.energy_counter = Capability::no("the energy counter has not been validated");
    auto info = read_power_info();
    if (!info) {
        const Capability c = capability_from(info.error());
        capabilities_.instant_power.support = c;
        capabilities_.average_power.support = c;
    } else {
        capabilities_.instant_power.support =
            info->current_w ? Capability::yes()
                            : Capability::no("amdsmi_get_power_info reports no current_socket_power on this GPU "
                                             "(MI300 and newer have it); use average power");
        capabilities_.average_power.support =
            info->average_w ? Capability::yes()
                            : Capability::no("amdsmi_get_power_info reports no average_socket_power on this GPU; "
                                             "use instant power");
    }
    capabilities_.memory_power.support = Capability::no("AMD SMI does not report memory power");
    capabilities_.memory_power.scope = PowerScope::Memory;
    auto cap = read_power_cap();
    capabilities_.power_limit = cap ? Capability::yes() : Capability::no(cap.error().describe());
}

Result<AmdGpu::PowerInfo> AmdGpu::read_power_info() const {
    Buffer raw{};
    if (auto s = call(lib_->fn().get_power_info, "amdsmi_get_power_info", static_cast<void*>(raw.data())); !s) {
        return s.error();
    }
    const bool v24 = lib_->abi() <= 24;
    PowerInfo info;
    info.current_w = watts_or_none(
        u32_at(raw, v24 ? ZEUS_AMDSMI_POWER_V24_CURRENT_OFFSET : ZEUS_AMDSMI_POWER_V25_CURRENT_OFFSET));
    info.average_w = watts_or_none(
        u32_at(raw, v24 ? ZEUS_AMDSMI_POWER_V24_AVERAGE_OFFSET : ZEUS_AMDSMI_POWER_V25_AVERAGE_OFFSET));
    return info;
}

Result<EnergySample> AmdGpu::read_energy_sample() const {
    EnergySample sample;
    float resolution = 0.0F;
    std::uint64_t timestamp = 0;
    if (auto s = call(lib_->fn().get_energy_count, "amdsmi_get_energy_count", &sample.counts, &resolution, &timestamp);
        !s) {
        return s.error();
    }
    sample.taken_at = std::chrono::steady_clock::now();
    sample.microjoules_per_count = static_cast<double>(resolution);
    if (!(sample.microjoules_per_count > 0.0) || !std::isfinite(sample.microjoules_per_count)) {
        return Error{ErrorCode::NotSupported,
                     fmt::format("GPU {}: amdsmi_get_energy_count reports a counter resolution of {} µJ", identity_.index,
                                 resolution),
                     "the energy counter cannot be used; integrate power instead", 0};
    }
    return sample;
}

std::optional<Milliwatts> AmdGpu::validation_power() const {
    auto info = read_power_info();
    if (!info) return std::nullopt;
    if (info->average_w) return Milliwatts(static_cast<std::int64_t>(*info->average_w) * 1000);
    if (info->current_w) return Milliwatts(static_cast<std::int64_t>(*info->current_w) * 1000);
    return std::nullopt;
}

void AmdGpu::set_energy_counter(Capability verdict, double microjoules_per_count) {
    capabilities_.energy_counter = std::move(verdict);
    if (!capabilities_.energy_counter.supported) return;
    microjoules_per_count_ = microjoules_per_count;
    CounterSpec spec;
    spec.name = fmt::format("AMD GPU {} energy (amdsmi_get_energy_count)", identity_.index);
    spec.range = 0;  // a 64-bit accumulator: it does not wrap in practice
    spec.joules_per_count = microjoules_per_count * 1e-6;
    // A delta implying more than the highest settable power cap (x1.5
    // margin in the accumulator) is a glitch; 1 kW when the cap is unknown.
    spec.max_power = Watts(1000.0);
    if (auto cap = read_power_cap(); cap && cap->max_power_cap > 0) {
        spec.max_power = Watts(static_cast<double>(std::max(cap->max_power_cap, cap->power_cap)) / 1e6);
    }
    const AmdGpu* self = this;
    counter_ = std::make_shared<AccumulatedCounter>(spec, [self]() -> Result<std::uint64_t> {
        auto sample = self->read_energy_sample();
        if (!sample) return sample.error();
        return sample->counts;
    });
    (void)counter_->read();  // baseline
}

void AmdGpu::disable_power(const std::string& reason) {
    power_disabled_reason_ = reason;
    capabilities_.instant_power.support = Capability::no(reason);
    capabilities_.average_power.support = Capability::no(reason);
    capabilities_.energy_counter = Capability::no(reason);
    counter_.reset();
}

std::optional<CounterStats> AmdGpu::counter_stats() const {
    if (!counter_) return std::nullopt;
    return counter_->stats();
}

Result<Millijoules> AmdGpu::total_energy() const {
    const Capability& cap = capabilities_.energy_counter;
    if (!cap.supported || !counter_) return not_supported("the energy counter", cap.reason);
    auto total = counter_->read();
    if (!total) return total.error();
    // Totals count from the driver's zero: the counter's first reading plus what it accumulated since.
    const auto first = counter_->accumulator().first_raw();
    const double base_mj = first ? static_cast<double>(*first) * microjoules_per_count_ / 1000.0 : 0.0;
    return Millijoules(static_cast<std::int64_t>(std::floor(base_mj + total->count() * 1000.0)));
}

Result<PowerReading> AmdGpu::power(PowerDomain domain) const {
    const PowerDomainCapability& cap = capabilities_.power(domain);
    const std::string label(to_string(domain));
    if (domain == PowerDomain::MemoryAverage || !power_disabled_reason_.empty() ||
        (!cap.support.supported && cap.support.definitive)) {
        return not_supported(label, cap.support.reason);
    }
    auto info = read_power_info();
    if (!info) return info.error();
    const auto& watts = domain == PowerDomain::DeviceInstant ? info->current_w : info->average_w;
    if (!watts) {
        return not_supported(label, fmt::format("amdsmi_get_power_info reports no {} on this GPU",
                                                domain == PowerDomain::DeviceInstant ? "current_socket_power"
                                                                                     : "average_socket_power"));
    }
    return PowerReading{Milliwatts(static_cast<std::int64_t>(*watts) * 1000), std::nullopt};
}

Result<Celsius> AmdGpu::temperature() const {
    // Hotspot (junction), as the original: closer to the core under load than edge.
    std::int64_t celsius = 0;
    auto s = call(lib_->fn().get_temp_metric, "amdsmi_get_temp_metric", AMDSMI_TEMPERATURE_TYPE_HOTSPOT,
                  AMDSMI_TEMP_CURRENT, &celsius);
    if (!s) return s.error();
    return Celsius(static_cast<double>(celsius));
}

Result<amdsmi_power_cap_info_t> AmdGpu::read_power_cap() const {
    amdsmi_power_cap_info_t info{};
    if (auto s = call(lib_->fn().get_power_cap_info, "amdsmi_get_power_cap_info", 0U, &info); !s) return s.error();
    return info;
}

Result<Milliwatts> AmdGpu::power_limit() const {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    return uw_floor(cap->power_cap);
}

Result<Milliwatts> AmdGpu::default_power_limit() const {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    return uw_floor(cap->default_power_cap);
}

Result<PowerLimitConstraints> AmdGpu::power_limit_constraints() const {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    return PowerLimitConstraints{uw_ceil(cap->min_power_cap), uw_floor(cap->max_power_cap)};
}

Status AmdGpu::set_power_limit(Milliwatts limit) {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    const PowerLimitConstraints range{uw_ceil(cap->min_power_cap), uw_floor(cap->max_power_cap)};
    if (limit < range.min || limit > range.max) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("power limit {} W is outside GPU {}'s range {}–{} W",
                                 quantity_cast<Watts>(limit).count(), identity_.index,
                                 quantity_cast<Watts>(range.min).count(), quantity_cast<Watts>(range.max).count()),
                     "choose a limit inside the range `zeus show-env` prints",
                     static_cast<int>(AMDSMI_STATUS_INVAL)};
    }
    const auto uw = static_cast<std::uint64_t>(limit.count()) * 1000U;
    if (cap->power_cap == uw) return {};  // nothing to change
    return call(lib_->fn().set_power_cap, "amdsmi_set_power_cap", 0U, uw);
}

Status AmdGpu::reset_power_limit() {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    if (cap->power_cap == cap->default_power_cap) return {};
    return call(lib_->fn().set_power_cap, "amdsmi_set_power_cap", 0U, cap->default_power_cap);
}

Status AmdGpu::check_power_limit_control() {
    auto cap = read_power_cap();
    if (!cap) return cap.error();
    return call(lib_->fn().set_power_cap, "amdsmi_set_power_cap", 0U, cap->power_cap);
}

Result<std::vector<Megahertz>> AmdGpu::clock_range(std::uint32_t clk_type, const char* what) const {
    amdsmi_clk_info_t info{};
    if (auto s = call(lib_->fn().get_clock_info, "amdsmi_get_clock_info", clk_type, &info); !s) {
        Error e = s.error();
        e.message += fmt::format(" (reading the {} clock range)", what);
        return e;
    }
    // As the original: [max, min], not every DPM level.
    return std::vector<Megahertz>{Megahertz(info.max_clk), Megahertz(info.min_clk)};
}

Result<std::vector<Megahertz>> AmdGpu::supported_memory_clocks() const { return clock_range(AMDSMI_CLK_TYPE_MEM, "memory"); }

Result<std::vector<Megahertz>> AmdGpu::supported_graphics_clocks(std::optional<Megahertz> /*memory_clock*/) const {
    return clock_range(AMDSMI_CLK_TYPE_GFX, "graphics");
}

Status AmdGpu::set_clock_range(std::uint32_t clk_type, Megahertz min, Megahertz max, const char* what) {
    if (min.count() <= 0 || max < min) {
        return Error{ErrorCode::InvalidArgument,
                     fmt::format("GPU {}: invalid {} clock range {}–{} MHz", identity_.index, what, min.count(),
                                 max.count()),
                     "give a positive minimum no larger than the maximum", static_cast<int>(AMDSMI_STATUS_INVAL)};
    }
    const auto lo = static_cast<std::uint64_t>(min.count());
    const auto hi = static_cast<std::uint64_t>(max.count());
    const Functions& f = lib_->fn();
    if (f.set_gpu_clk_range != nullptr) return call(f.set_gpu_clk_range, "amdsmi_set_gpu_clk_range", lo, hi, clk_type);
    // ABI 27 keeps only the per-limit setter. The order matters when the new
    // range lies above the old one: try min then max, else max then min.
    if (f.set_gpu_clk_limit == nullptr) return Library::missing_function("amdsmi_set_gpu_clk_range");
    auto first = call(f.set_gpu_clk_limit, "amdsmi_set_gpu_clk_limit", clk_type, AMDSMI_CLK_LIMIT_MIN, lo);
    if (first) return call(f.set_gpu_clk_limit, "amdsmi_set_gpu_clk_limit", clk_type, AMDSMI_CLK_LIMIT_MAX, hi);
    if (auto s = call(f.set_gpu_clk_limit, "amdsmi_set_gpu_clk_limit", clk_type, AMDSMI_CLK_LIMIT_MAX, hi); !s) return s;
    return call(f.set_gpu_clk_limit, "amdsmi_set_gpu_clk_limit", clk_type, AMDSMI_CLK_LIMIT_MIN, lo);
}

Status AmdGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
    return set_clock_range(AMDSMI_CLK_TYPE_GFX, min, max, "graphics");
}

Status AmdGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
    return set_clock_range(AMDSMI_CLK_TYPE_MEM, min, max, "memory");
}

Status AmdGpu::reset_gpu_locked_clocks() {
    return not_supported("resetting only the graphics clock",
                         "AMD SMI returns all clocks to automatic control together; use reset_locked_clocks()");
}

Status AmdGpu::reset_memory_locked_clocks() {
    return not_supported("resetting only the memory clock",
                         "AMD SMI returns all clocks to automatic control together; use reset_locked_clocks()");
}

Status AmdGpu::reset_locked_clocks() {
    return call(lib_->fn().set_gpu_perf_level, "amdsmi_set_gpu_perf_level", AMDSMI_DEV_PERF_LEVEL_AUTO);
}

Result<bool> AmdGpu::persistence_mode() const {
    return not_supported("persistence mode", "AMD GPUs have no persistence mode (amdgpu keeps them initialised)");
}

Status AmdGpu::set_persistence_mode(bool /*enabled*/) {
    return not_supported("persistence mode", "AMD GPUs have no persistence mode (amdgpu keeps them initialised)");
}

}  // namespace zeus::amd
