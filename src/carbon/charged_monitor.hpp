// What CarbonEmissionMonitor and EnergyCostMonitor share: open() over an
// EnergyMonitor of their own on the GPUs' clock, and the HourlyCharger's
// result under the original's field names.
#pragma once

#include <memory>

#include "carbon/hourly_charger.hpp"
#include "zeus/carbon/hourly_monitor_options.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::carbon {

inline HourlyMonitorOptions with_clock_of(const Gpus& gpus, HourlyMonitorOptions options) {
    if (!options.clock) options.clock = window_clock(gpus);
    return options;
}

// open(): a monitor over its own EnergyMonitor, on the GPUs' clock.
template <class Monitor, class Provider>
Result<std::unique_ptr<Monitor>> open_with_own_energy_monitor(const Gpus& gpus, const Cpus* cpus,
                                                              std::shared_ptr<Provider> provider,
                                                              EnergyMonitorOptions energy_options,
                                                              HourlyMonitorOptions options,
                                                              std::unique_ptr<EnergyMonitor> Monitor::*owned) {
    auto energy = EnergyMonitor::open(gpus, cpus, nullptr, std::move(energy_options));
    if (!energy) return energy.error();
    auto own = std::move(energy).value();
    auto monitor = std::make_unique<Monitor>(*own, std::move(provider), with_clock_of(gpus, std::move(options)));
    (*monitor).*owned = std::move(own);
    return monitor;
}

// The charger's result under the original's field names (both measurements share the layout).
template <class M>
Result<M> to_measurement(Result<ChargedWindow> charged) {
    if (!charged) return charged.error();
    ChargedWindow c = std::move(charged).value();
    return M{std::move(c.measurement), std::move(c.gpu), std::move(c.cpu), std::move(c.dram), c.total,
             std::move(c.provenance)};
}

}  // namespace zeus::carbon
