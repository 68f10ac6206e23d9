// The GPU's own sensors, as they behave on real boards: values that refresh on
// their own period instead of tracking the true power continuously.
//  - energy counter (mJ): at tick k (time k * energy_period) it shows
//    offset + floor(1000 * ground-truth energy at the tick);
//  - instant power: at tick k (k * power_period) it shows the mean true power
//    over [tick - power_window, tick] (+ seeded noise, + injected spikes);
//  - 1 s average: the mean over the last round(1 s / power_period) periods.
#pragma once

#include "shared_state.h"

namespace zeus::sim {

// Earliest sensor or fault event strictly after t, or +inf.
double next_sensor_event(const GpuState& gpu, double t);

// Applies every sensor tick and fault that falls due at time t (the physics
// has integrated the GPU exactly up to t).
void process_sensor_events(GpuState& gpu, double t);

// After the physics skipped [t0, t1] at constant power (steady state), brings
// the sensors to the values they would have had at t1.
void skip_sensor_events(GpuState& gpu, double t0, double energy_at_t0_j, double power_w, double t1);

// Resets the sensors for a fresh state at time 0.
void initialize_sensors(GpuState& gpu);

// Energy counter value for `energy_j` given the current offset.
std::uint64_t energy_counter_value(const GpuDynamics& dyn, double energy_j);

}  // namespace zeus::sim
