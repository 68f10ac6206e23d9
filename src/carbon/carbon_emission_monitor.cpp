// CarbonEmissionMonitor: the HourlyCharger at each hour's carbon intensity,
// with the original's field names.
#include "zeus/carbon/carbon_emission_monitor.hpp"

#include <memory>

#include "carbon/charged_monitor.hpp"
#include "carbon/hourly_charger.hpp"

namespace zeus::carbon {

namespace {

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

}  // namespace

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

}  // namespace zeus::carbon
