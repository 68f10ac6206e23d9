#include "charged_windows.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "option_checks.hpp"
#include "zeus/carbon/electricity_maps.hpp"
#include "zeus/carbon/intensity_file.hpp"
#include "zeus/carbon/openei.hpp"
#include "zeus/carbon/price_file.hpp"
#include "zeus/platform/environment.hpp"

namespace zeus::cli {

namespace {

constexpr const char* kWindow = "zeus";

Error conflicting(const char* a, const char* b) {
    return Error{ErrorCode::InvalidArgument, fmt::format("{} and {} both say where the {} come from", a, b,
                                                         std::string(a).starts_with("--price") ? "prices" : "intensities"),
                 fmt::format("give one of {} and {}", a, b)};
}

// "42.28,-83.74" as a location, or nullopt when it is not two numbers.
std::optional<carbon::GeoLocation> as_location(const std::string& text) {
    double lat = 0;
    double lon = 0;
    char extra = 0;
    if (std::sscanf(text.c_str(), "%lf,%lf%c", &lat, &lon, &extra) != 2) return std::nullopt;
    return carbon::GeoLocation{lat, lon, "given"};
}

}  // namespace

Result<std::shared_ptr<carbon::CarbonIntensityProvider>> intensity_provider(const ChargeOptions& o) {
    if (o.carbon_intensity && !o.carbon_file.empty()) return conflicting("--carbon-intensity", "--carbon-file");
    if (!o.carbon_zone.empty() && !o.carbon_file.empty()) return conflicting("--carbon-zone", "--carbon-file");
    if (o.carbon_intensity) {
        // With --carbon-zone, the zone is only the label of the user's number.
        auto p = carbon::constant_intensity(*o.carbon_intensity, o.carbon_zone);
        if (!p) return p.error();
        return std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(p).value());
    }
    if (!o.carbon_file.empty()) {
        auto p = carbon::intensity_from_file(o.carbon_file);
        if (!p) return p.error();
        return std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(p).value());
    }
    carbon::ElectricityMapsOptions em;
    em.estimate = o.carbon_estimate;
    // Tests (and API mirrors) point the provider elsewhere.
    if (auto url = get_env("ZEUS_ELECTRICITYMAPS_URL")) em.base_url = *url;
    if (o.carbon_zone == "from-ip") {
        auto where = carbon::locate_by_ip(get_env("ZEUS_IPINFO_URL").value_or("https://ipinfo.io"));
        if (!where) return where.error();
        std::cerr << "zeus: note: --carbon-zone from-ip: location " << where->latitude << "," << where->longitude
                  << " from " << where->source << "\n";
        em.location = *where;
    } else if (auto location = as_location(o.carbon_zone)) {
        em.location = *location;
    } else {
        em.zone = o.carbon_zone;
    }
    auto p = carbon::ElectricityMaps::open(std::move(em));
    if (!p) return p.error();
    return std::shared_ptr<carbon::CarbonIntensityProvider>(std::move(p).value());
}

namespace {

Result<std::shared_ptr<carbon::ElectricityPriceProvider>> openei_provider(const ChargeOptions& o) {
    if (o.price) return conflicting("--price", "--price-openei");
    if (!o.price_file.empty()) return conflicting("--price-file", "--price-openei");
    const auto location = as_location(o.price_location);
    if (!location) {
        return Error{ErrorCode::InvalidArgument,
                     o.price_location.empty() ? std::string("--price-openei needs the utility's location")
                                              : fmt::format("--price-location '{}' is not LAT,LON", o.price_location),
                     "add --price-location LAT,LON, e.g. --price-location 42.28,-83.74"};
    }
    carbon::OpenEiOptions openei;
    openei.location = *location;
    openei.label = o.price_openei;
    openei.sector = o.price_sector;
    // Tests (and API mirrors) point the provider elsewhere.
    if (auto url = get_env("ZEUS_OPENEI_URL")) openei.base_url = *url;
    auto p = carbon::openei_prices(std::move(openei));
    if (!p) return p.error();
    return std::shared_ptr<carbon::ElectricityPriceProvider>(std::move(p).value());
}

Result<std::shared_ptr<carbon::ElectricityPriceProvider>> price_provider(const ChargeOptions& o) {
    if (!o.price_openei.empty()) return openei_provider(o);
    if (!o.price_location.empty()) {
        return Error{ErrorCode::InvalidArgument, "--price-location only says where the --price-openei utility is",
                     "add --price-openei LABEL, or drop --price-location"};
    }
    if (o.price && !o.price_file.empty()) return conflicting("--price", "--price-file");
    auto p = o.price ? carbon::constant_price(*o.price, o.currency) : carbon::prices_from_file(o.price_file, o.currency);
    if (!p) return p.error();
    return std::shared_ptr<carbon::ElectricityPriceProvider>(std::move(p).value());
}

// Each device's amount under its report label.
template <class M>
std::map<std::string, double> by_device(const M& amounts_gpu, const M& amounts_cpu, const M& amounts_dram) {
    std::map<std::string, double> out;
    if (amounts_gpu) for (const auto& [i, v] : *amounts_gpu) out[report::gpu_label(i)] = v;
    if (amounts_cpu) for (const auto& [i, v] : *amounts_cpu) out[report::cpu_label(i)] = v;
    if (amounts_dram) for (const auto& [i, v] : *amounts_dram) out[fmt::format("DRAM {}", i)] = v;
    return out;
}

}  // namespace

void add_carbon_options(CLI::App& app, ChargeOptions& options) {
    app.add_option("--carbon-zone", options.carbon_zone,
                   "Carbon intensity from ElectricityMaps for this zone (e.g. US-MIDW-MISO) or LAT,LON, or from-ip "
                   "to locate this machine by its IP address; token in ELECTRICITYMAPS_API_TOKEN")
        ->check(utf8_name());
    app.add_option("--carbon-intensity", options.carbon_intensity,
                   "Carbon intensity in gCO2eq/kWh for every hour (offline; --carbon-zone then labels it)")
        ->check(finite_number(0.0, 1e5, "gCO2eq/kWh"));
    app.add_option("--carbon-file", options.carbon_file,
                   "Hourly carbon intensity from a file: CSV datetime,carbon_intensity or a saved ElectricityMaps "
                   "answer (offline)");
    app.add_flag("--carbon-estimate", options.carbon_estimate, "Accept ElectricityMaps' estimated intensities");
}

void add_charge_options(CLI::App& app, ChargeOptions& options) {
    add_carbon_options(app, options);
    app.add_option("--carbon-fallback", options.carbon_fallback,
                   "gCO2eq/kWh for hours the provider has no value for (flagged and warned about); without it "
                   "those windows' emission is unavailable")
        ->check(finite_number(0.0, 1e5, "gCO2eq/kWh"));
    app.add_option("--price", options.price, "Electricity price per kWh for every hour")
        ->check(finite_number(0.0, 1e6, "per kWh"));
    app.add_option("--price-file", options.price_file,
                   "Time-of-use prices from a CSV: days,start_hour,end_hour,price_per_kwh[,months] (UTC hours)");
    app.add_option("--price-openei", options.price_openei,
                   "Prices from the OpenEI utility rate with this label (the rate's schedule by UTC hour, as the "
                   "original); key in OPENEI_API_KEY; needs --price-location")
        ->check(utf8_name());
    app.add_option("--price-location", options.price_location, "LAT,LON of the utility for --price-openei");
    app.add_option("--price-sector", options.price_sector,
                   "OpenEI sector: Residential, Commercial, Industrial, Lighting")
        ->capture_default_str()
        ->check(utf8_name());
    app.add_option("--currency", options.currency, "The currency of --price / --price-file (e.g. USD), for the report")
        ->check(utf8_name());
}

Result<std::unique_ptr<ChargedWindows>> ChargedWindows::open(const ChargeOptions& options, EnergyMonitor& energy,
                                                             const Gpus& gpus) {
    std::unique_ptr<ChargedWindows> charges;
    if (!options.any()) {
        if (options.carbon_estimate || options.carbon_fallback || !options.currency.empty() ||
            !options.price_location.empty()) {
            return Error{ErrorCode::InvalidArgument,
                         "--carbon-estimate, --carbon-fallback, --currency and --price-location only qualify a carbon or "
                         "price source",
                         "add --carbon-zone, --carbon-intensity, --carbon-file, --price, --price-file or --price-openei"};
        }
        return charges;
    }
    charges.reset(new ChargedWindows());
    carbon::HourlyMonitorOptions hourly;
    hourly.clock = carbon::window_clock(gpus);
    if (!options.carbon_zone.empty() || options.carbon_intensity || !options.carbon_file.empty()) {
        auto provider = intensity_provider(options);
        if (!provider) return provider.error();
        auto o = hourly;
        o.fallback_per_kwh = options.carbon_fallback;
        charges->carbon_ = std::make_unique<carbon::CarbonEmissionMonitor>(energy, std::move(provider).value(), o);
    }
    if (options.price || !options.price_file.empty() || !options.price_openei.empty()) {
        auto provider = price_provider(options);
        if (!provider) return provider.error();
        charges->cost_ = std::make_unique<carbon::EnergyCostMonitor>(energy, std::move(provider).value(), hourly);
    }
    return charges;
}

void ChargedWindows::begin() {
    if (carbon_) {
        if (auto ok = carbon_->begin_hourly_split(kWindow); !ok) begin_errors_.push_back(ok.error().describe());
    }
    if (cost_) {
        if (auto ok = cost_->begin_hourly_split(kWindow); !ok) begin_errors_.push_back(ok.error().describe());
    }
}

void ChargedWindows::end(const Measurement& window, report::EnergyReport& r) {
    for (const auto& e : begin_errors_) r.warnings.push_back("the hourly split could not begin: " + e);
    if (carbon_) {
        if (auto m = carbon_->end_hourly_split(kWindow, window)) {
            r.carbon = carbon::ChargeLine{"carbon", m->total_carbon_emission, m->provenance,
                                          by_device(m->gpu_carbon_emission, m->cpu_carbon_emission,
                                                    m->dram_carbon_emission)};
        } else {
            r.warnings.push_back("no carbon emission: " + m.error().describe());
        }
    }
    if (cost_) {
        if (auto m = cost_->end_hourly_split(kWindow, window)) {
            r.cost = carbon::ChargeLine{"cost", m->total_energy_cost, m->provenance,
                                        by_device(m->gpu_energy_cost, m->cpu_energy_cost, m->dram_energy_cost)};
        } else {
            r.warnings.push_back("no cost: " + m.error().describe());
        }
    }
}

}  // namespace zeus::cli
