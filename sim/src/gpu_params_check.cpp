#include "gpu_params_check.h"

#include <cmath>

namespace zeus::sim {
namespace {

// Inclusive, with slack for the ms -> s conversion; false for NaN.
bool within(double x, double lo, double hi) { return x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9); }

}  // namespace

const char* invalid_gpu_params_reason(const GpuParams& p) {
  // Bounds of the configuration (see config.cpp).
  if (!within(p.energy_period_s, 0.001, 10)) return "energy counter period out of range";
  if (!within(p.power_period_s, 0.010, 1)) return "power sensor period out of range";
  if (!within(p.power_window_s, 0.001, p.power_period_s)) return "power window out of range";
  if (!within(p.thermal_time_constant_s, 0.001, 1e9)) return "thermal time constant out of range";
  if (!within(p.graphics_min_mhz, 1, 10000) || !within(p.graphics_max_mhz, p.graphics_min_mhz, 10000)) {
    return "graphics clock range out of range";
  }
  if (!within(p.clock_exponent, 0.5, 5)) return "clock exponent out of range";
  if (!std::isfinite(p.idle_w) || !std::isfinite(p.max_dynamic_w) || !std::isfinite(p.leakage_w_per_c) ||
      !std::isfinite(p.ambient_c) || !std::isfinite(p.thermal_resistance_c_per_w)) {
    return "power or thermal parameter not finite";
  }
  return nullptr;
}

}  // namespace zeus::sim
