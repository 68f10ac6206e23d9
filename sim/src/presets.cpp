#include "presets.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "device/nvml/nvml_abi.h"
#include "random.h"

namespace zeus::sim {
namespace {

void copy_string(char* dst, std::size_t size, std::string_view src) {
  const std::size_t n = std::min(size - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// Parameters shared by every preset; each preset then sets what differs.
GpuParams base_params() {
  GpuParams p{};
  p.leakage_w_per_c = 0.4;
  p.clock_exponent = 2.5;
  p.memory_power_fraction = 0.0;
  p.ambient_c = 30.0;
  p.thermal_resistance_c_per_w = 0.1;
  p.thermal_time_constant_s = 20.0;
  p.throttle_temperature_c = 87.0;
  p.throttle_mhz_per_c = 60.0;
  p.energy_period_s = 0.100;  // "approximately every 100 ms" (measurement-facts B.1)
  p.power_period_s = 0.100;
  p.power_window_s = 0.025;  // A100/H100: T = 100 ms, W = 25 ms (arXiv 2312.02741)
  p.power_noise_w = 0.5;
  p.power_usage_source = PowerUsageSource::kAverage1s;
  p.energy_counter_supported = true;
  p.power_average_field_supported = true;
  p.gpu_scope_supported = true;
  p.module_scope_supported = false;
  p.memory_scope_supported = false;
  p.can_set_power_limit = true;
  p.can_set_clocks = true;
  p.can_set_persistence = true;
  p.fault_counter_reset_at_s = -1.0;
  p.fault_stuck_counter_after_s = -1.0;
  p.fault_spike_every_s = -1.0;
  p.initial_temperature_c = std::nan("");  // idle equilibrium unless configured
  p.memory_clock_count = 1;
  return p;
}

struct PresetSpec {
  const char* key;
  const char* trace_names;  // comma-separated; summary_power_<name>.csv traces come from this GPU
  const char* name;
  std::uint32_t arch;
  int cc_major, cc_minor;
  std::uint64_t memory_mib;
  std::uint32_t pci_device_id, pci_subsystem_id;
  double idle_w, max_dynamic_w, limit_min_w, limit_max_w, limit_default_w;
  double graphics_max_mhz, graphics_min_mhz;
  std::uint32_t memory_mhz;
  double power_period_ms, power_window_ms;
  PowerUsageSource usage;
  bool energy, average_field, gpu_scope, module_scope, memory_scope;
  double module_extra_w, memory_fraction;
};

// Values from public datasheets and nvidia-smi output of real boards; sensor
// behaviour per reference/measurement-facts.md B.1.
// Limits, clocks and memory: NVIDIA's datasheets and `nvidia-smi -q` of real
// boards (docs/simulator.md cites each); idle power: nvidia-smi of an idle
// board in P0. Sensor behaviour per reference/measurement-facts.md B.1.
constexpr PresetSpec kPresets[] = {
    {"A100-SXM4-40GB", "a100", "NVIDIA A100-SXM4-40GB", NVML_DEVICE_ARCH_AMPERE, 8, 0, 40960, 0x20B010DE, 0x134F10DE,
     55, 330, 100, 400, 400, 1410, 210, 1215, 100, 25, PowerUsageSource::kInstant, true, true, true, false,
     false, 0, 0},
    {"H100-SXM5-80GB", "h100", "NVIDIA H100 80GB HBM3", NVML_DEVICE_ARCH_HOPPER, 9, 0, 81559, 0x233010DE,
     0x16C110DE, 70, 600, 200, 700, 700, 1980, 345, 2619, 100, 25, PowerUsageSource::kAverage1s, true, true, true,
     false, true, 0, 0.15},
    // GA102 behaves like the RTX 3090 in the paper: T = W = 100 ms.
    {"A40", "a40", "NVIDIA A40", NVML_DEVICE_ARCH_AMPERE, 8, 6, 46068, 0x223510DE, 0x145A10DE, 30, 260, 100, 300,
     300, 1740, 210, 7251, 100, 100, PowerUsageSource::kAverage1s, true, true, true, false, false, 0, 0},
    // Pascal and Volta: T = 20 ms, W = 10 ms.
    {"V100-SXM2-16GB", "v100sxm2", "Tesla V100-SXM2-16GB", NVML_DEVICE_ARCH_VOLTA, 7, 0, 16160, 0x1DB110DE,
     0x121210DE, 40, 250, 150, 300, 300, 1530, 135, 877, 20, 10, PowerUsageSource::kInstant, true, false, true,
     false, false, 0, 0},
    // The Zeus paper's V100 (its trace runs 100-250 W, the PCIe board's range).
    {"V100-PCIE-32GB", "v100", "Tesla V100-PCIE-32GB", NVML_DEVICE_ARCH_VOLTA, 7, 0, 32510, 0x1DB610DE, 0x124A10DE,
     35, 210, 100, 250, 250, 1380, 135, 877, 20, 10, PowerUsageSource::kInstant, true, false, true, false, false, 0,
     0},
    {"P100-PCIE-16GB", "p100", "Tesla P100-PCIE-16GB", NVML_DEVICE_ARCH_PASCAL, 6, 0, 16280, 0x15F810DE,
     0x118F10DE, 30, 200, 125, 250, 250, 1328, 544, 715, 20, 10, PowerUsageSource::kInstant, false, false, true,
     false, false, 0, 0},
    // Turing: T = W = 100 ms; the energy counter exists since Volta.
    {"RTX6000", "rtx6000,quadrortx6000", "Quadro RTX 6000", NVML_DEVICE_ARCH_TURING, 7, 5, 24576, 0x1E3010DE,
     0x12BA10DE, 20, 235, 100, 260, 260, 1770, 300, 7001, 100, 100, PowerUsageSource::kInstant, true, false, true,
     false, false, 0, 0},
    {"T4", "t4", "Tesla T4", NVML_DEVICE_ARCH_TURING, 7, 5, 15360, 0x1EB810DE, 0x12A210DE, 10, 60, 60, 70, 70, 1590,
     300, 5001, 100, 100, PowerUsageSource::kInstant, true, false, true, false, false, 0, 0},
    {"A10", "a10", "NVIDIA A10", NVML_DEVICE_ARCH_AMPERE, 8, 6, 23028, 0x223610DE, 0x148210DE, 20, 130, 100, 150,
     150, 1695, 210, 6251, 100, 100, PowerUsageSource::kAverage1s, true, true, true, false, false, 0, 0},
    // Ada: sensors taken to behave like GA102's (T = W = 100 ms).
    {"L4", "l4", "NVIDIA L4", NVML_DEVICE_ARCH_ADA, 8, 9, 23034, 0x27B810DE, 0x16CA10DE, 16, 56, 40, 72, 72, 2040,
     210, 6251, 100, 100, PowerUsageSource::kAverage1s, true, true, true, false, false, 0, 0},
    {"L40S", "l40s", "NVIDIA L40S", NVML_DEVICE_ARCH_ADA, 8, 9, 46068, 0x26B910DE, 0x185110DE, 35, 315, 100, 350,
     350, 2520, 210, 9001, 100, 100, PowerUsageSource::kAverage1s, true, true, true, false, false, 0, 0},
    {"H200", "h200", "NVIDIA H200", NVML_DEVICE_ARCH_HOPPER, 9, 0, 143771, 0x233510DE, 0x18BE10DE, 75, 625, 200, 700,
     700, 1980, 345, 3201, 100, 25, PowerUsageSource::kAverage1s, true, true, true, false, true, 0, 0.15},
    // Grace Hopper: power is reported for the module (GPU + Grace CPU + memory);
    // GPU-scope power fields are not supported. GPU: T = 100 ms, W = 20 ms.
    {"GH200", "gh200", "NVIDIA GH200 480GB", NVML_DEVICE_ARCH_HOPPER, 9, 0, 97871, 0x234210DE, 0x16EB10DE, 90, 600,
     200, 900, 900, 1980, 345, 2619, 100, 20, PowerUsageSource::kAverage1s, true, true, false, true, true, 120,
     0.15},
};

std::string normalise(std::string_view text) {
  std::string out;
  for (char c : text) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  for (std::string_view prefix : {"NVIDIA ", "TESLA "}) {
    if (out.starts_with(prefix)) out.erase(0, prefix.size());
  }
  return out;
}

void copy_spec(const PresetSpec& s, GpuParams& p) {
  copy_string(p.model, sizeof p.model, s.key);
  copy_string(p.name, sizeof p.name, s.name);
  p.architecture = s.arch;
  p.cc_major = s.cc_major;
  p.cc_minor = s.cc_minor;
  p.memory_total_bytes = s.memory_mib * 1024ULL * 1024ULL;
  p.pci_device_id = s.pci_device_id;
  p.pci_subsystem_id = s.pci_subsystem_id;
  p.idle_w = s.idle_w;
  p.max_dynamic_w = s.max_dynamic_w;
  p.leakage_reference_c = p.ambient_c;
  p.limit_min_w = s.limit_min_w;
  p.limit_max_w = s.limit_max_w;
  p.limit_default_w = s.limit_default_w;
  p.graphics_max_mhz = s.graphics_max_mhz;
  p.graphics_min_mhz = s.graphics_min_mhz;
  p.memory_clock_mhz = s.memory_mhz;
  p.memory_clocks_mhz[0] = s.memory_mhz;
  p.power_period_s = s.power_period_ms / 1000.0;
  p.power_window_s = s.power_window_ms / 1000.0;
  p.power_usage_source = s.usage;
  p.energy_counter_supported = s.energy;
  p.power_average_field_supported = s.average_field;
  p.gpu_scope_supported = s.gpu_scope;
  p.module_scope_supported = s.module_scope;
  p.memory_scope_supported = s.memory_scope;
  p.module_extra_w = s.module_extra_w;
  p.memory_power_fraction = s.memory_fraction;
  fill_graphics_clocks(p, 15.0);
  p.driver_latency = default_driver_latency(s.arch);
}

}  // namespace

std::optional<GpuParams> find_preset(std::string_view model) {
  const std::string wanted = normalise(model);
  for (const PresetSpec& spec : kPresets) {
    if (wanted == normalise(spec.key) || wanted == normalise(spec.name)) {
      GpuParams p = base_params();
      copy_spec(spec, p);
      return p;
    }
  }
  return std::nullopt;
}

std::size_t preset_count() { return std::size(kPresets); }

std::optional<PresetSummary> preset_summary(std::size_t index) {
  if (index >= std::size(kPresets)) return std::nullopt;
  const PresetSpec& s = kPresets[index];
  return PresetSummary{s.key, s.name, s.trace_names, s.limit_min_w, s.limit_max_w, s.limit_default_w,
                       s.energy};
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const PresetSpec& spec : kPresets) names.emplace_back(spec.key);
  return names;
}

void fill_graphics_clocks(GpuParams& p, double step_mhz) {
  p.graphics_clock_count = 0;
  for (double f = p.graphics_max_mhz; f > p.graphics_min_mhz + 1e-9 && p.graphics_clock_count < kMaxGraphicsClocks - 1;
       f -= step_mhz) {
    p.graphics_clocks_mhz[p.graphics_clock_count++] = static_cast<std::uint32_t>(std::lround(f));
  }
  p.graphics_clocks_mhz[p.graphics_clock_count++] = static_cast<std::uint32_t>(std::lround(p.graphics_min_mhz));
}

void assign_identity(GpuParams& p, std::uint64_t seed, unsigned index) {
  SplitMix64 rng(seed * 0x9E3779B97F4A7C15ULL + index + 1);
  const std::uint64_t a = rng.next();
  const std::uint64_t b = rng.next();
  std::snprintf(p.uuid, sizeof p.uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xffffffffffffULL));
  std::snprintf(p.serial, sizeof p.serial, "1320%09llu", static_cast<unsigned long long>(rng.next() % 1000000000ULL));
  // Bus numbers of the eight GPUs in a DGX A100; further GPUs continue upwards.
  constexpr std::uint32_t kDgxBuses[] = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};
  p.pci_domain = 0;
  p.pci_bus = index < 8 ? kDgxBuses[index] : 0xC0 + (index - 8) * 4;
  p.pci_device = 0;
  std::snprintf(p.pci_bus_id, sizeof p.pci_bus_id, "%08X:%02X:%02X.0", p.pci_domain, p.pci_bus, p.pci_device);
  std::snprintf(p.pci_bus_id_legacy, sizeof p.pci_bus_id_legacy, "%04X:%02X:%02X.0", p.pci_domain, p.pci_bus,
                p.pci_device);
  p.noise_seed = rng.next();
  // NVML's counter counts since the driver was loaded, so a fresh state shows
  // the energy of hours to days of earlier use, not 0.
  p.initial_energy_mj = 1'000'000'000ULL + rng.next() % 50'000'000'000ULL;
}

}  // namespace zeus::sim
