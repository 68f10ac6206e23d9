// The original's CarbonEmissionMonitor: energy windows whose energy is split
// into the UTC hours they span, each hour's energy times that hour's carbon
// intensity. Every result says which provider and zone, which intensity each
// hour got (with its timestamp and estimated flag), and whether a fallback
// was used. A provider that cannot be reached leaves the energy intact and
// the emission unavailable, never 0.
//
//   auto provider = zeus::carbon::ElectricityMaps::open({.zone = "DE"}).value();
//   auto monitor = zeus::carbon::CarbonEmissionMonitor::open(gpus, &cpus, std::move(provider)).value();
//   monitor->begin_window("train").value();
//   ...
//   auto m = monitor->end_window("train").value();   // m.gpu_carbon_emission, m.provenance
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "zeus/carbon/hourly_monitor_options.hpp"
#include "zeus/carbon/intensity_provider.hpp"
#include "zeus/carbon/window_charge.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::carbon {

class HourlyCharger;

struct CarbonEmissionMeasurement {
    Measurement energy;  // the window as EnergyMonitor measured it
    // gCO2eq by device index; nullopt when unavailable (provenance says why).
    std::optional<std::map<unsigned, double>> gpu_carbon_emission;
    std::optional<std::map<unsigned, double>> cpu_carbon_emission;
    std::optional<std::map<unsigned, double>> dram_carbon_emission;
    std::optional<double> total_carbon_emission;  // every device above summed
    ChargeProvenance provenance;
};

class CarbonEmissionMonitor {
  public:
    // With its own EnergyMonitor over `gpus` and `cpus` (which must outlive it), as the original.
    [[nodiscard]] static Result<std::unique_ptr<CarbonEmissionMonitor>> open(
        const Gpus& gpus, const Cpus* cpus, std::shared_ptr<CarbonIntensityProvider> provider,
        EnergyMonitorOptions energy_options = {}, HourlyMonitorOptions options = {});
    // Over an EnergyMonitor the caller owns (it must outlive this monitor).
    CarbonEmissionMonitor(EnergyMonitor& energy, std::shared_ptr<CarbonIntensityProvider> provider,
                          HourlyMonitorOptions options = {});
    ~CarbonEmissionMonitor();
    CarbonEmissionMonitor(const CarbonEmissionMonitor&) = delete;
    CarbonEmissionMonitor& operator=(const CarbonEmissionMonitor&) = delete;

    // Errors: InvalidState for a key already open, and the EnergyMonitor's.
    Status begin_window(std::string_view key, bool sync = true);
    // Errors: NotFound for a key not open, and the EnergyMonitor's. The
    // provider's failures are not errors: they are in the provenance.
    Result<CarbonEmissionMeasurement> end_window(std::string_view key, bool sync = true);
    // What the background thread does: split open windows at an hour
    // boundary passed since the last poll, fetch the current hour's
    // intensity. For callers that move time themselves (the simulator's virtual clock).
    void poll();

    // For a caller that measures the window itself (`zeus run`): only the
    // hourly split is kept here, and end_hourly_split charges the caller's
    // Measurement of the same span, so its joules and the amounts agree.
    Status begin_hourly_split(std::string_view key);
    Result<CarbonEmissionMeasurement> end_hourly_split(std::string_view key, const Measurement& window);

    [[nodiscard]] CarbonIntensityProvider& provider() { return *provider_; }
    [[nodiscard]] EnergyMonitor& energy_monitor() { return energy_; }

  private:
    std::unique_ptr<EnergyMonitor> owned_energy_;
    EnergyMonitor& energy_;
    std::shared_ptr<CarbonIntensityProvider> provider_;
    std::unique_ptr<HourlyCharger> charger_;
};

}  // namespace zeus::carbon
