// CarbonEmissionMonitor and EnergyCostMonitor: the HourlyCharger with the
// original's field names.
#include <memory>

#include "carbon/hourly_charger.hpp"
#include "device/simulator_clock.hpp"
#include "zeus/carbon/carbon_emission_monitor.hpp"
#include "zeus/carbon/energy_cost_monitor.hpp"

namespace zeus::carbon {

namespace {

HourlyMonitorOptions with_clock_of(const Gpus& gpus, HourlyMonitorOptions options) {
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

RateSource intensity_source(const std::shared_ptr<CarbonIntensityProvider>& provider) {
    return RateSource{
        "carbon intensity",
        [provider] {
            ChargeProvenance p;
            p.provider = provider->provider();
            p.zone = provider->zone();
            p.unit = "gCO2eq";
            return p;
        },
        [provider](const std::vector<UtcTime>& hours) { return provider->intensities(hours); }};
}

RateSource price_source(const std::shared_ptr<ElectricityPriceProvider>& provider) {
    return RateSource{
        "electricity price",
        [provider] {
            ChargeProvenance p;
            p.provider = provider->provider();
            p.zone = provider->zone();
            p.unit = provider->currency();
            return p;
        },
        [provider](const std::vector<UtcTime>& hours) { return provider->prices(hours); }};
}

}  // namespace

std::function<std::chrono::system_clock::time_point()> window_clock(const Gpus& gpus) {
    if (auto sim = SimulatorClock::virtual_clock_of(gpus)) {
        auto clock = std::make_shared<SimulatorClock>(std::move(*sim));
        return [clock] { return clock->wall_now(); };
    }
    return [] { return std::chrono::system_clock::now(); };
}

CarbonEmissionMonitor::CarbonEmissionMonitor(EnergyMonitor& energy, std::shared_ptr<CarbonIntensityProvider> provider,
                                             HourlyMonitorOptions options)
    : energy_(energy),
      provider_(std::move(provider)),
      charger_(std::make_unique<HourlyCharger>(energy_, "carbon", intensity_source(provider_), std::move(options))) {}

CarbonEmissionMonitor::~CarbonEmissionMonitor() { charger_.reset(); }

Result<std::unique_ptr<CarbonEmissionMonitor>> CarbonEmissionMonitor::open(
    const Gpus& gpus, const Cpus* cpus, std::shared_ptr<CarbonIntensityProvider> provider,
    EnergyMonitorOptions energy_options, HourlyMonitorOptions options) {
    return open_with_own_energy_monitor(gpus, cpus, std::move(provider), std::move(energy_options), std::move(options),
                                        &CarbonEmissionMonitor::owned_energy_);
}

Status CarbonEmissionMonitor::begin_window(std::string_view key, bool sync) { return charger_->begin(key, sync); }

Result<CarbonEmissionMeasurement> CarbonEmissionMonitor::end_window(std::string_view key, bool sync) {
    return to_measurement<CarbonEmissionMeasurement>(charger_->end(key, sync));
}

void CarbonEmissionMonitor::poll() { charger_->poll(); }

Status CarbonEmissionMonitor::begin_hourly_split(std::string_view key) { return charger_->begin(key, false, false); }

Result<CarbonEmissionMeasurement> CarbonEmissionMonitor::end_hourly_split(std::string_view key, const Measurement& window) {
    return to_measurement<CarbonEmissionMeasurement>(charger_->end(key, false, &window));
}

EnergyCostMonitor::EnergyCostMonitor(EnergyMonitor& energy, std::shared_ptr<ElectricityPriceProvider> provider,
                                     HourlyMonitorOptions options)
    : energy_(energy),
      provider_(std::move(provider)),
      charger_(std::make_unique<HourlyCharger>(energy_, "cost", price_source(provider_), std::move(options))) {}

EnergyCostMonitor::~EnergyCostMonitor() { charger_.reset(); }

Result<std::unique_ptr<EnergyCostMonitor>> EnergyCostMonitor::open(const Gpus& gpus, const Cpus* cpus,
                                                                   std::shared_ptr<ElectricityPriceProvider> provider,
                                                                   EnergyMonitorOptions energy_options,
                                                                   HourlyMonitorOptions options) {
    return open_with_own_energy_monitor(gpus, cpus, std::move(provider), std::move(energy_options), std::move(options),
                                        &EnergyCostMonitor::owned_energy_);
}

Status EnergyCostMonitor::begin_window(std::string_view key, bool sync) { return charger_->begin(key, sync); }

Result<EnergyCostMeasurement> EnergyCostMonitor::end_window(std::string_view key, bool sync) {
    return to_measurement<EnergyCostMeasurement>(charger_->end(key, sync));
}

void EnergyCostMonitor::poll() { charger_->poll(); }

Status EnergyCostMonitor::begin_hourly_split(std::string_view key) { return charger_->begin(key, false, false); }

Result<EnergyCostMeasurement> EnergyCostMonitor::end_hourly_split(std::string_view key, const Measurement& window) {
    return to_measurement<EnergyCostMeasurement>(charger_->end(key, false, &window));
}

}  // namespace zeus::carbon
