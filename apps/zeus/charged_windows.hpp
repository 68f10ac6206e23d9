// `zeus run` / `zeus energy`: --carbon-zone, --carbon-intensity,
// --carbon-file, --price, --price-file, --price-openei. The measured window's carbon emission
// and cost, from the library's monitors (zeus/carbon/) over the session's
// EnergyMonitor, put into the report beside the joules.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zeus/carbon/carbon_emission_monitor.hpp"
#include "zeus/carbon/energy_cost_monitor.hpp"
#include "zeus/report/measurement_report.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace zeus::cli {

struct ChargeOptions {
    std::string carbon_zone;                 // ElectricityMaps zone, "LAT,LON", or "from-ip"
    std::optional<double> carbon_intensity;  // gCO2eq/kWh for every hour
    std::string carbon_file;                 // CSV or saved ElectricityMaps JSON
    bool carbon_estimate = false;            // accept ElectricityMaps' estimates
    std::optional<double> carbon_fallback;   // gCO2eq/kWh when the provider has no value (flagged)
    std::optional<double> price;             // per kWh
    std::string price_file;                  // time-of-use CSV
    std::string price_openei;                // OpenEI rate label (key in OPENEI_API_KEY)
    std::string price_location;              // "LAT,LON" of the OpenEI utility
    std::string price_sector = "Residential";
    std::string currency;

    [[nodiscard]] bool any() const {
        return !carbon_zone.empty() || carbon_intensity || !carbon_file.empty() || price || !price_file.empty() ||
               !price_openei.empty();
    }
};
void add_charge_options(CLI::App& app, ChargeOptions& options);
// Only --carbon-zone, --carbon-intensity, --carbon-file, --carbon-estimate
// (`zeus power-limit`'s carbon selector).
void add_carbon_options(CLI::App& app, ChargeOptions& options);
// The intensity provider the --carbon-* options name (one of them must be
// given); errors for conflicting ones, a bad file or a missing token.
[[nodiscard]] Result<std::shared_ptr<carbon::CarbonIntensityProvider>> intensity_provider(const ChargeOptions& options);

class ChargedWindows {
  public:
    // Checks the options and opens the providers (no request is made yet).
    // nullptr when none was asked for.
    static Result<std::unique_ptr<ChargedWindows>> open(const ChargeOptions& options, EnergyMonitor& energy,
                                                        const Gpus& gpus);
    // Right after the measured window begins.
    void begin();
    // Right after it ends: the carbon and cost of `window` into `report`.
    void end(const Measurement& window, report::EnergyReport& report);

  private:
    ChargedWindows() = default;
    std::unique_ptr<carbon::CarbonEmissionMonitor> carbon_;
    std::unique_ptr<carbon::EnergyCostMonitor> cost_;
    std::vector<std::string> begin_errors_;
};

}  // namespace zeus::cli
