// The original's EnergyCostMonitor: energy windows split into the UTC hours
// they span, each hour's energy times that hour's electricity price, with
// the same provenance as CarbonEmissionMonitor (carbon_emission_monitor.hpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "zeus/carbon/hourly_monitor_options.hpp"
#include "zeus/carbon/price_provider.hpp"
#include "zeus/carbon/window_charge.hpp"
#include "zeus/monitor/energy_monitor.hpp"

namespace zeus::carbon {

class HourlyCharger;

struct EnergyCostMeasurement {
    Measurement energy;
    // In the provider's currency (provenance.unit) by device index; nullopt when unavailable.
    std::optional<std::map<unsigned, double>> gpu_energy_cost;
    std::optional<std::map<unsigned, double>> cpu_energy_cost;
    std::optional<std::map<unsigned, double>> dram_energy_cost;
    std::optional<double> total_energy_cost;
    ChargeProvenance provenance;
};

class EnergyCostMonitor {
  public:
    [[nodiscard]] static Result<std::unique_ptr<EnergyCostMonitor>> open(
        const Gpus& gpus, const Cpus* cpus, std::shared_ptr<ElectricityPriceProvider> provider,
        EnergyMonitorOptions energy_options = {}, HourlyMonitorOptions options = {});
    EnergyCostMonitor(EnergyMonitor& energy, std::shared_ptr<ElectricityPriceProvider> provider,
                      HourlyMonitorOptions options = {});
    ~EnergyCostMonitor();
    EnergyCostMonitor(const EnergyCostMonitor&) = delete;
    EnergyCostMonitor& operator=(const EnergyCostMonitor&) = delete;

    Status begin_window(std::string_view key, bool sync = true);
    Result<EnergyCostMeasurement> end_window(std::string_view key, bool sync = true);
    void poll();

    // For a caller that measures the window itself (`zeus run`): only the
    // hourly split is kept here, and end_hourly_split charges the caller's
    // Measurement of the same span, so its joules and the amounts agree.
    Status begin_hourly_split(std::string_view key);
    Result<EnergyCostMeasurement> end_hourly_split(std::string_view key, const Measurement& window);

    [[nodiscard]] ElectricityPriceProvider& provider() { return *provider_; }
    [[nodiscard]] EnergyMonitor& energy_monitor() { return energy_; }

  private:
    std::unique_ptr<EnergyMonitor> owned_energy_;
    EnergyMonitor& energy_;
    std::shared_ptr<ElectricityPriceProvider> provider_;
    std::unique_ptr<HourlyCharger> charger_;
};

}  // namespace zeus::carbon
