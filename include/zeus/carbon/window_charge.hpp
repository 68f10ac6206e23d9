// What a carbon or cost window reports beyond its energy: the provenance of
// every number. Shared by CarbonEmissionMeasurement and EnergyCostMeasurement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/carbon/hourly_rate.hpp"
#include "zeus/platform/units.hpp"

namespace zeus::carbon {

// One UTC hour of a window: how much of the window fell in it, and the rate
// it was charged at.
struct HourCharge {
    UtcTime hour;
    Seconds time{0.0};    // of the window inside this hour
    Joules energy{0.0};   // every measured device's energy inside this hour
    std::optional<HourlyRate> rate;  // nullopt: no value for this hour (the window's amount is unavailable)
    bool fallback = false;           // the rate is not the provider's value for this hour
    std::string fallback_reason;     // why, and what was used instead
    double amount = 0;               // energy × rate: gCO2eq or currency (0 when rate is nullopt)
};

struct ChargeProvenance {
    std::string provider;  // "ElectricityMaps", "OpenEI", "constant", "file ..."
    std::string zone;
    std::string unit;      // "gCO2eq", "USD", or "" for a price of unknown currency
    std::vector<HourCharge> hours;  // in time order
    bool fallback_used = false;     // any hour's rate was a fallback (each one is also a warning)
    bool estimated = false;         // any hour's rate was an estimate
    // Set when the amounts are unavailable: why (the provider's error, or the
    // hours without a value). The energy is still measured.
    std::string unavailable_reason;
    std::vector<std::string> warnings;

    [[nodiscard]] bool available() const { return unavailable_reason.empty(); }
};

}  // namespace zeus::carbon
