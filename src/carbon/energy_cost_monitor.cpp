// EnergyCostMonitor: the HourlyCharger at each hour's electricity price,
// with the original's field names.
#include "zeus/carbon/energy_cost_monitor.hpp"

#include <memory>

#include "carbon/charged_monitor.hpp"
#include "carbon/hourly_charger.hpp"

namespace zeus::carbon {

namespace {

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
