// Energy, power, temperature and power-limit queries. Readings come from the
// simulated sensors (see src/counters.h), never from the ground truth.
#include <cstdlib>
#include <type_traits>

#include "nvml_common.h"
#include "nvml_functions.h"

using namespace zeus::sim;
using namespace zeus::sim::nvml;

static_assert(std::is_same_v<decltype(&nvmlDeviceGetTotalEnergyConsumption), nvmlDeviceGetTotalEnergyConsumption_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPowerUsage), nvmlDeviceGetPowerUsage_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetFieldValues), nvmlDeviceGetFieldValues_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTemperature), nvmlDeviceGetTemperature_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTemperatureV), nvmlDeviceGetTemperatureV_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetC2cModeInfoV), nvmlDeviceGetC2cModeInfoV_fn>);
static_assert(nvmlTemperature_v1 == 0x100000C);  // NVML's value (sizeof 12, version 1)
static_assert(std::is_same_v<decltype(&nvmlDeviceSetPowerManagementLimit), nvmlDeviceSetPowerManagementLimit_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPowerManagementLimitConstraints),
                             nvmlDeviceGetPowerManagementLimitConstraints_fn>);

namespace {

// A function the configured driver is too old to have answers as a missing
// symbol does for clients that look functions up (pynvml raises FUNCTION_NOT_FOUND).
bool driver_has(const Simulator& sim, int first_major) {
  return std::atoi(sim.config().driver_version.c_str()) >= first_major;
}
constexpr int kTemperatureVDriver = 565;
constexpr int kC2cModeInfoDriver = 550;

bool energy_readable(const GpuState& gpu) { return gpu.params.energy_counter_supported && !gpu.dyn.energy_disabled; }

// Power reading of a scope in W, or nullopt-like false if the board lacks it.
bool scoped_power(const GpuState& gpu, unsigned scope, double gpu_reading_w, double& out_w) {
  const GpuParams& p = gpu.params;
  switch (scope) {
    case NVML_POWER_SCOPE_GPU:
      if (!p.gpu_scope_supported) return false;
      out_w = gpu_reading_w;
      return true;
    case NVML_POWER_SCOPE_MODULE:
      if (!p.module_scope_supported) return false;
      out_w = gpu_reading_w + p.module_extra_w;
      return true;
    case NVML_POWER_SCOPE_MEMORY:
      if (!p.memory_scope_supported) return false;
      out_w = gpu_reading_w * p.memory_power_fraction;
      return true;
    default:
      return false;
  }
}

void fill_field(Simulator& sim, const GpuState& gpu, nvmlFieldValue_t& v) {
  const GpuDynamics& d = gpu.dyn;
  v.latencyUsec = 0;
  v.value.ullVal = 0;
  double watts = 0;
  switch (v.fieldId) {
    case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
      if (!energy_readable(gpu)) break;
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.value.ullVal = d.energy_counter_mj;
      v.timestamp = sim.unix_us_at(d.energy_refreshed_s);
      v.nvmlReturn = NVML_SUCCESS;
      return;
    case NVML_FI_DEV_POWER_INSTANT:
      if (!scoped_power(gpu, v.scopeId, d.instant_power_w, watts)) break;
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      v.value.uiVal = to_milli(watts);
      v.timestamp = sim.unix_us_at(d.power_refreshed_s);
      v.nvmlReturn = NVML_SUCCESS;
      return;
    case NVML_FI_DEV_POWER_AVERAGE:
      if (!gpu.params.power_average_field_supported || !scoped_power(gpu, v.scopeId, d.average_power_w, watts)) break;
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      v.value.uiVal = to_milli(watts);
      v.timestamp = sim.unix_us_at(d.power_refreshed_s);
      v.nvmlReturn = NVML_SUCCESS;
      return;
    default:
      break;
  }
  v.timestamp = 0;
  v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
}

template <typename Value>
nvmlReturn_t limit_query(nvmlDevice_t device, unsigned* out, Value&& value) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    *out = to_milli(value(gpu));
    return NVML_SUCCESS;
  });
}

unsigned long long clock_event_reasons(const GpuState& gpu, const OperatingPoint& op) {
  const GpuParams& p = gpu.params;
  const GpuDynamics& d = gpu.dyn;
  if (op.utilization <= 0) return ZEUS_SIM_NVML_CLOCKS_EVENT_GPU_IDLE;
  unsigned long long reasons = 0;
  if (op.clock_mhz < p.graphics_max_mhz - 0.5) {
    if (d.temperature_c > p.throttle_temperature_c) reasons |= ZEUS_SIM_NVML_CLOCKS_EVENT_SW_THERMAL;
    if (d.locked_max_mhz > 0 && op.clock_mhz >= d.locked_max_mhz - 0.5) {
      reasons |= ZEUS_SIM_NVML_CLOCKS_EVENT_APPLICATIONS_CLOCKS;
    } else if (op.power_w >= d.power_limit_w - 0.01) {
      reasons |= ZEUS_SIM_NVML_CLOCKS_EVENT_SW_POWER_CAP;
    }
  }
  return reasons;
}

nvmlReturn_t event_reasons(nvmlDevice_t device, unsigned long long* reasons) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
    // device_call advanced the GPU to now, so these are the current values.
    OperatingPoint op;
    op.utilization = gpu.dyn.utilization;
    op.clock_mhz = gpu.dyn.clock_mhz;
    op.power_w = gpu.dyn.power_w;
    *reasons = clock_event_reasons(gpu, op);
    return NVML_SUCCESS;
  });
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  return device_call(DriverCall::kTotalEnergy, device, [&](Simulator&, GpuState& gpu, double) {
    if (!energy) return NVML_ERROR_INVALID_ARGUMENT;
    if (!energy_readable(gpu)) return NVML_ERROR_NOT_SUPPORTED;
    *energy = gpu.dyn.energy_counter_mj;
    return NVML_SUCCESS;
  });
}

// GA100 and older: the instant reading; other Ampere and newer: the 1 s
// average. Boards without GPU-scope power (GH200) report the module.
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return device_call(DriverCall::kPowerUsage, device, [&](Simulator&, GpuState& gpu, double) {
    if (!power) return NVML_ERROR_INVALID_ARGUMENT;
    const GpuParams& p = gpu.params;
    double watts = p.power_usage_source == PowerUsageSource::kInstant ? gpu.dyn.instant_power_w : gpu.dyn.average_power_w;
    if (!p.gpu_scope_supported) watts += p.module_extra_w;
    *power = to_milli(watts);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  return device_call(DriverCall::kFieldValues, device, [&](Simulator& sim, GpuState& gpu, double) {
    if (count <= 0 || !values) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < count; ++i) fill_field(sim, gpu, values[i]);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  return device_call(DriverCall::kTemperature, device, [&](Simulator&, GpuState& gpu, double) {
    if (!temp || raw_enum(sensor) != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    const long whole = std::lround(gpu.dyn.temperature_c);
    *temp = whole < 0 ? 0u : static_cast<unsigned>(whole);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t* temperature) {
  return device_call(DriverCall::kTemperature, device, [&](Simulator& sim, GpuState& gpu, double) {
    if (!driver_has(sim, kTemperatureVDriver)) return NVML_ERROR_FUNCTION_NOT_FOUND;
    if (!temperature) return NVML_ERROR_INVALID_ARGUMENT;
    if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (raw_enum(temperature->sensorType) != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    temperature->temperature = static_cast<int>(std::lround(gpu.dyn.temperature_c));
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device, nvmlC2cModeInfo_v1_t* info) {
  return device_call(device, [&](Simulator& sim, GpuState& gpu, double) {
    if (!driver_has(sim, kC2cModeInfoDriver)) return NVML_ERROR_FUNCTION_NOT_FOUND;
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    // The module power scope is the Grace CPU attached over NVLink-C2C (GH200).
    if (!gpu.params.module_scope_supported) return NVML_ERROR_NOT_SUPPORTED;
    info->isC2cEnabled = 1;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return device_call(device, [&](Simulator&, GpuState&, double) {
    if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return limit_query(device, limit, [](const GpuState& g) { return g.dyn.power_limit_w; });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return limit_query(device, limit, [](const GpuState& g) { return g.dyn.power_limit_w; });
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* limit) {
  return limit_query(device, limit, [](const GpuState& g) { return g.params.limit_default_w; });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* min_limit,
                                                          unsigned int* max_limit) {
  return device_call(device, [&](Simulator&, GpuState& gpu, double) {
    if (!min_limit || !max_limit) return NVML_ERROR_INVALID_ARGUMENT;
    *min_limit = to_milli(gpu.params.limit_min_w);
    *max_limit = to_milli(gpu.params.limit_max_w);
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit) {
  return device_call(DriverCall::kSetter, device, [&](Simulator&, GpuState& gpu, double) {
    if (!gpu.params.can_set_power_limit) return NVML_ERROR_NO_PERMISSION;
    if (limit < to_milli(gpu.params.limit_min_w) || limit > to_milli(gpu.params.limit_max_w)) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    gpu.dyn.power_limit_w = limit / 1000.0;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int* state) {
  return device_call(device, [&](Simulator&, GpuState&, double) {
    if (!state) return NVML_ERROR_INVALID_ARGUMENT;
    *state = 0;  // NVML_PSTATE_0: data-center GPUs stay in P0 while the driver is loaded
    return NVML_SUCCESS;
  });
}
nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, int* state) {
  return nvmlDeviceGetPerformanceState(device, state);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return event_reasons(device, reasons);
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return event_reasons(device, reasons);
}

}  // extern "C"
